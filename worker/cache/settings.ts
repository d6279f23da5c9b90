import { logEvent } from '../http/log.ts';
import type { CachePolicy } from '../routes/table.ts';

/** Lifetimes used when the variable is unset or invalid, in seconds. */
const DEFAULT_CACHE_TTL_SEC: Readonly<Record<CachePolicy, number>> = {
  banks: 3600,
  resolve: 300,
};

/** The shortest lifetime KV accepts (`expirationTtl`), in seconds; shorter ones are raised to it. */
const MIN_KV_TTL_SEC = 60;

const SETTING: Readonly<Record<CachePolicy, 'BANKS_CACHE_TTL_SEC' | 'RESOLVE_CACHE_TTL_SEC'>> = {
  banks: 'BANKS_CACHE_TTL_SEC',
  resolve: 'RESOLVE_CACHE_TTL_SEC',
};

const parsed = new Map<string, number>();

/**
 * The cache lifetime of a policy from `BANKS_CACHE_TTL_SEC` / `RESOLVE_CACHE_TTL_SEC`,
 * parsed once per value: `0` turns that cache off; 1 to 59 are raised to KV's minimum
 * of 60 s; an invalid value falls back to the default (logged once).
 *
 * @param env - the Worker's bindings.
 * @param policy - which cache.
 * @returns the lifetime in seconds, `0` when off.
 * @default 3600 for `banks`, 300 for `resolve`
 */
export function cacheTtlSec(env: Env, policy: CachePolicy): number {
  const setting = SETTING[policy];
  const raw = (env[setting] ?? '').trim();
  const memo = `${policy}\n${raw}`;
  let ttl = parsed.get(memo);
  if (ttl === undefined) {
    ttl = parseTtl(raw, setting, DEFAULT_CACHE_TTL_SEC[policy]);
    parsed.set(memo, ttl);
  }
  return ttl;
}

function parseTtl(raw: string, setting: string, fallback: number): number {
  if (raw === '') return fallback;
  if (/^\d{1,9}$/.test(raw)) {
    const ttl = Number(raw);
    return ttl === 0 ? 0 : Math.max(ttl, MIN_KV_TTL_SEC);
  }
  logEvent('warn', 'config_invalid', {
    setting,
    problem: `expected a non-negative integer of seconds, using ${fallback}`,
  });
  return fallback;
}
