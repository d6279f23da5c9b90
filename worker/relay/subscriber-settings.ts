/**
 * The settings of the subscriber URL rules, parsed once per value: `ALLOW_LOCAL_SUBSCRIBERS`,
 * `SUBSCRIBER_PORTS` and `SUBSCRIBER_DNS_RESOLVER`. A malformed value is a configuration
 * problem: it is logged once (`config_invalid`) and the safe default is used.
 */
import { logEvent } from '../http/log.ts';

/** The subscriber settings, as {@link subscriberSettings} reads them. */
export interface SubscriberSettings {
  /** `ALLOW_LOCAL_SUBSCRIBERS` is on: loopback subscribers (http or https, any port) are allowed. */
  readonly allowLocal: boolean;
  /** Ports a subscriber URL may name: 443, 80 and those of `SUBSCRIBER_PORTS`. */
  readonly ports: ReadonlySet<number>;
  /** The DNS-over-HTTPS resolver (JSON API) asked before each delivery to a named host. */
  readonly dnsResolver: string;
}

/** The ports every subscriber URL may use: https and http. */
const STANDARD_PORTS: readonly number[] = [443, 80];

/** The resolver used when `SUBSCRIBER_DNS_RESOLVER` is unset or malformed. */
const DEFAULT_DNS_RESOLVER = 'https://cloudflare-dns.com/dns-query';

const TRUE_ISH: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);

/**
 * The settings with the strictest values, as the OpenAPI document describes the rules:
 * no local subscribers, ports 443 and 80 only.
 */
export const DEFAULT_SUBSCRIBER_SETTINGS: SubscriberSettings = {
  allowLocal: false,
  ports: new Set(STANDARD_PORTS),
  dnsResolver: DEFAULT_DNS_RESOLVER,
};

const portsByValue = new Map<string, ReadonlySet<number>>();
const resolverByValue = new Map<string, string>();

/**
 * Reads the subscriber settings from the Worker's variables, each parsed once per value.
 *
 * @param env - the bindings: `ALLOW_LOCAL_SUBSCRIBERS`, `SUBSCRIBER_PORTS`,
 *   `SUBSCRIBER_DNS_RESOLVER` (missing ones count as unset).
 * @returns the settings; a malformed `SUBSCRIBER_PORTS` leaves 443 and 80 only, a
 *   malformed `SUBSCRIBER_DNS_RESOLVER` the default resolver (each logged once).
 */
export function subscriberSettings(
  env: Partial<
    Pick<Env, 'ALLOW_LOCAL_SUBSCRIBERS' | 'SUBSCRIBER_PORTS' | 'SUBSCRIBER_DNS_RESOLVER'>
  >,
): SubscriberSettings {
  return {
    allowLocal: allowLocalSubscribers(env.ALLOW_LOCAL_SUBSCRIBERS),
    ports: parsedOnce(portsByValue, env.SUBSCRIBER_PORTS, allowedPorts),
    dnsResolver: parsedOnce(resolverByValue, env.SUBSCRIBER_DNS_RESOLVER, dnsResolver),
  };
}

function parsedOnce<T>(
  cache: Map<string, T>,
  raw: string | undefined,
  parse: (value: string) => T,
): T {
  const value = (raw ?? '').trim();
  let result = cache.get(value);
  if (result === undefined) {
    result = parse(value);
    cache.set(value, result);
  }
  return result;
}

/**
 * Reads `ALLOW_LOCAL_SUBSCRIBERS`: `1`, `true`, `yes` or `on` (any case, spaces
 * trimmed) turn it on; anything else, including unset, leaves it off.
 *
 * @param value - the variable's value.
 * @returns whether loopback subscribers are allowed.
 * @default false
 */
export function allowLocalSubscribers(value: string | undefined): boolean {
  return TRUE_ISH.has((value ?? '').trim().toLowerCase());
}

/** 443, 80 and the ports of `SUBSCRIBER_PORTS` (comma-separated, 1 to 65535; all or nothing). */
function allowedPorts(value: string): ReadonlySet<number> {
  const extra = value === '' ? [] : value.split(',').map((part) => part.trim());
  if (extra.every((port) => /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    return new Set([...STANDARD_PORTS, ...extra.map(Number)]);
  }
  logEvent('error', 'config_invalid', {
    setting: 'SUBSCRIBER_PORTS',
    problem: 'expected comma-separated port numbers (1 to 65535); only 443 and 80 are allowed',
  });
  return new Set(STANDARD_PORTS);
}

/** `SUBSCRIBER_DNS_RESOLVER`: an https URL without credentials. */
function dnsResolver(value: string): string {
  if (value === '') return DEFAULT_DNS_RESOLVER;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'https:' && url.username === '' && url.password === '') return url.href;
  logEvent('error', 'config_invalid', {
    setting: 'SUBSCRIBER_DNS_RESOLVER',
    problem: `expected an https URL; using ${DEFAULT_DNS_RESOLVER}`,
  });
  return DEFAULT_DNS_RESOLVER;
}
