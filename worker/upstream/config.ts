import { InternalError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';

/** Upstream timeout when `UPSTREAM_TIMEOUT_MS` is unset or invalid, in milliseconds. */
const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/** The upstream settings of the gateway, parsed from `Env`. */
interface UpstreamConfig {
  /** `UPSTREAM_BASE_URL`: http(s), may carry a path prefix. */
  readonly baseUrl: URL;
  /** `UPSTREAM_TIMEOUT_MS`: whole-request limit including the body read, in milliseconds. */
  readonly timeoutMs: number;
}

let cached: { key: string; config: UpstreamConfig | string } | undefined;

/**
 * The upstream settings, parsed once per isolate and per value. An invalid
 * `UPSTREAM_TIMEOUT_MS` falls back to 30000 ms (logged once); an invalid
 * `UPSTREAM_BASE_URL` is logged once and fails every proxied request.
 *
 * @param env - the Worker's bindings.
 * @throws {InternalError} when `UPSTREAM_BASE_URL` is not an absolute http(s) URL.
 */
export function upstreamConfig(env: Env): UpstreamConfig {
  const base = env.UPSTREAM_BASE_URL ?? '';
  const timeout = env.UPSTREAM_TIMEOUT_MS ?? '';
  const key = `${base}\n${timeout}`;
  if (cached === undefined || cached.key !== key) {
    cached = { key, config: parseConfig(base, timeout) };
    if (typeof cached.config === 'string') {
      logEvent('error', 'config_invalid', { setting: 'UPSTREAM_BASE_URL', problem: cached.config });
    }
  }
  if (typeof cached.config === 'string') {
    throw new InternalError(`UPSTREAM_BASE_URL: ${cached.config}`);
  }
  return cached.config;
}

function parseConfig(base: string, timeout: string): UpstreamConfig | string {
  const baseUrl = URL.canParse(base) ? new URL(base) : undefined;
  if (baseUrl === undefined || !['http:', 'https:'].includes(baseUrl.protocol)) {
    return 'expected an absolute http(s) URL';
  }
  if (baseUrl.search !== '' || baseUrl.hash !== '') return 'must not carry a query or fragment';
  if (baseUrl.username !== '' || baseUrl.password !== '') return 'must not carry credentials';
  return { baseUrl, timeoutMs: parseTimeout(timeout) };
}

function parseTimeout(value: string): number {
  if (value === '') return DEFAULT_UPSTREAM_TIMEOUT_MS;
  const timeoutMs = /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : 0;
  if (timeoutMs > 0) return timeoutMs;
  logEvent('warn', 'config_invalid', {
    setting: 'UPSTREAM_TIMEOUT_MS',
    problem: `expected a positive integer of milliseconds, using ${DEFAULT_UPSTREAM_TIMEOUT_MS}`,
  });
  return DEFAULT_UPSTREAM_TIMEOUT_MS;
}
