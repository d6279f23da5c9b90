/**
 * The gateway's settings: every variable and secret of `Env` read by one valibot schema
 * into one typed, frozen {@link Settings} object, kept per isolate. Nothing else in
 * worker/ reads a setting from `env`; bindings (`DB`, `CACHE`, `DELIVERIES`,
 * `RATE_LIMITER`) are used directly.
 *
 * An invalid setting is never silently replaced by a default: the gateway answers 503
 * `configuration_error` naming the variable (never its value), logs the problem once per
 * isolate, and `GET /healthz` reports it. Outside local mode the production rules apply
 * (https upstream, a webhook secret, long and distinct tokens, rate limiting on, no
 * development switches). Local mode is only ever switched on explicitly, by
 * `GATEWAY_MODE=local` (`npm start` sets it); an unset mode is production.
 * docs/configuration.md lists every setting.
 */
import * as v from 'valibot';
import { timingSafeEqual } from '../lib/shared.ts';
import { type Caller, CallersSchema } from './auth/callers.ts';
import { HttpError } from './http/errors.ts';
import { logEvent } from './http/log.ts';

/** `local` relaxes the production rules for `npm start` and tests; anything else is `production`. */
export type GatewayMode = 'local' | 'production';

/** The settings of the subscriber URL rules and of the DNS check before each delivery. */
export interface SubscriberSettings {
  /** `ALLOW_LOCAL_SUBSCRIBERS`: loopback subscribers (http or https, any port) are allowed. */
  readonly allowLocal: boolean;
  /** Ports a subscriber URL may name: 443, 80 and those of `SUBSCRIBER_PORTS`. */
  readonly ports: ReadonlySet<number>;
  /** `SUBSCRIBER_DNS_RESOLVER`: the DNS-over-HTTPS resolver (JSON API) asked before each delivery. */
  readonly dnsResolver: string;
}

/** The gateway's settings, as {@link settingsOf} reads them from `Env`. */
export interface Settings {
  /** `GATEWAY_MODE`. */
  readonly mode: GatewayMode;
  readonly upstream: {
    /** `UPSTREAM_BASE_URL`: http(s) (https outside local mode), may carry a path prefix. */
    readonly baseUrl: string;
    /** `UPSTREAM_TIMEOUT_MS`: whole-request limit including the body read, in milliseconds. */
    readonly timeoutMs: number;
    /** `UPSTREAM_KEY_ID`: the merchant key id requests are signed with. */
    readonly keyId: string;
    /** `UPSTREAM_SECRET`: the merchant secret requests are signed with. */
    readonly secret: string;
  };
  /** `MAX_BODY_BYTES`: the largest request body accepted, in bytes (413 above). */
  readonly maxBodyBytes: number;
  readonly idempotency: {
    /** `IDEMPOTENCY_RETENTION_SEC`: how long a completed key is kept, in seconds. */
    readonly retentionSec: number;
    /** `IDEMPOTENCY_LOCK_TIMEOUT_SEC`: after this an in-flight claim is presumed dead, in seconds. */
    readonly lockTimeoutSec: number;
  };
  /** KV cache lifetimes in seconds, `0` when that cache is off; 1 to 59 are raised to 60. */
  readonly cacheTtlSec: {
    /** `BANKS_CACHE_TTL_SEC`. */
    readonly banks: number;
    /** `RESOLVE_CACHE_TTL_SEC`. */
    readonly resolve: number;
  };
  /** `RATE_LIMIT_PER_MINUTE`: requests per minute per caller; `0` (local mode only) is off. */
  readonly rateLimitPerMinute: number;
  /** `GATEWAY_CALLERS`: who may call the proxy, with their tokens and allow-lists. */
  readonly callers: readonly Caller[];
  /** `ADMIN_TOKEN`, or `undefined` when unset (the admin API is then off). */
  readonly adminToken: string | undefined;
  readonly webhooks: {
    /** `WEBHOOK_SECRET`, or `undefined` when unset (local mode only). */
    readonly secret: string | undefined;
    /** `ALLOW_UNSIGNED_WEBHOOKS` (local mode only): accept unsigned events without a secret. */
    readonly allowUnsigned: boolean;
  };
  /** `CONFIRM_MONEY_EVENTS`: confirm money webhooks upstream before fan-out. */
  readonly confirmMoneyEvents: boolean;
  readonly subscribers: SubscriberSettings;
  /** `RELAY_RETENTION_DAYS`: webhook events older than this are purged, in days. */
  readonly relayRetentionDays: number;
}

/** One invalid setting: the variable's name and what is wrong, never its value. */
export interface ConfigurationProblem {
  readonly variable: SettingName;
  readonly problem: string;
}

/** The outcome of reading the settings: the settings, or every problem found. */
export type LoadedSettings =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly problems: readonly ConfigurationProblem[] };

/** Requests per minute per caller when `RATE_LIMIT_PER_MINUTE` is unset. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

/** The resolver asked when `SUBSCRIBER_DNS_RESOLVER` is unset. */
export const DEFAULT_DNS_RESOLVER = 'https://cloudflare-dns.com/dns-query';

/** The shortest gateway or admin token accepted outside local mode, in characters. */
export const MIN_TOKEN_LENGTH = 32;

/** The shortest lifetime KV accepts (`expirationTtl`), in seconds; shorter ones are raised to it. */
const MIN_KV_TTL_SEC = 60;

/** The largest request body a Worker may receive (Cloudflare's 100 MB limit), in bytes. */
const MAX_REQUEST_BODY_BYTES = 100 * 1024 * 1024;

/** The ports every subscriber URL may use: https and http. */
const STANDARD_PORTS: readonly number[] = [443, 80];

/**
 * The subscriber settings with the strictest values, as the OpenAPI document describes
 * the rules: no local subscribers, ports 443 and 80 only, the default resolver.
 */
export const DEFAULT_SUBSCRIBER_SETTINGS: SubscriberSettings = Object.freeze({
  allowLocal: false,
  ports: new Set(STANDARD_PORTS),
  dnsResolver: DEFAULT_DNS_RESOLVER,
});

const TRUE_WORDS: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['', '0', 'false', 'no', 'off']);

// Bearer tokens are visible ASCII (RFC 6750's b64token is a subset).
const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

// Every message below is a fixed text: an issue message must never quote the value it
// judged (the value may be a secret), so no schema here keeps valibot's default messages.

/**
 * A binding's value as text, as set: unset is empty; a number or boolean (an unquoted
 * TOML value, which wrangler passes as JSON) is its text; anything else is refused.
 */
const asText = v.pipe(
  v.optional(v.unknown(), ''),
  v.rawTransform<unknown, string>(({ dataset, addIssue, NEVER }) => {
    const { value } = dataset;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    addIssue({ message: 'expected a string' });
    return NEVER;
  }),
);

/** A variable's value as text, spaces trimmed. */
const text = v.pipe(
  asText,
  v.transform((value) => value.trim()),
);

/** A secret's value exactly as set (never trimmed: spaces may be part of it). */
const secret = asText;

/** A whole number from `min` to `max`, `fallback` when unset; `unit` names it in the message. */
function wholeNumber(fallback: number, min: number, max: number, unit: string) {
  const message = `expected a whole number of ${unit} from ${min} to ${max}`;
  return v.pipe(
    text,
    v.transform((value) => (value === '' ? String(fallback) : value)),
    v.regex(/^\d{1,10}$/, message),
    v.transform(Number),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

/** A KV cache lifetime: `0` turns the cache off, 1 to 59 are raised to KV's minimum. */
function cacheLifetime(fallback: number) {
  return v.pipe(
    wholeNumber(fallback, 0, 31_536_000, 'seconds'),
    v.transform((ttl) => (ttl === 0 ? 0 : Math.max(ttl, MIN_KV_TTL_SEC))),
  );
}

/** A switch: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off` (any case); unset is `fallback`. */
function flag(fallback: boolean) {
  return v.pipe(
    text,
    v.transform((value) => value.toLowerCase()),
    v.check(
      (value) => TRUE_WORDS.has(value) || FALSE_WORDS.has(value),
      'expected true or false (also 1/0, yes/no, on/off)',
    ),
    v.transform((value) => (value === '' ? fallback : TRUE_WORDS.has(value))),
  );
}

/** A token: empty when unset, otherwise visible ASCII. */
const token = v.pipe(
  secret,
  v.check((value) => value === '' || VISIBLE_ASCII.test(value), 'expected visible ASCII only'),
);

/** An absolute URL of one of `protocols`, without query, fragment or credentials. */
function absoluteUrl(protocols: readonly string[], what: string) {
  return v.rawTransform<string, string>(({ dataset, addIssue, NEVER }) => {
    const url = URL.canParse(dataset.value) ? new URL(dataset.value) : undefined;
    let problem: string | undefined;
    if (url === undefined || !protocols.includes(url.protocol)) problem = `expected ${what}`;
    else if (url.username !== '' || url.password !== '') problem = 'must not carry credentials';
    else if (url.search !== '' || url.hash !== '') problem = 'must not carry a query or fragment';
    if (problem === undefined && url !== undefined) return url.href;
    addIssue({ message: problem ?? `expected ${what}` });
    return NEVER;
  });
}

/** A required text value, trimmed. */
const requiredText = v.pipe(text, v.nonEmpty('is not set'));

/** A required secret, as set. */
const requiredSecret = v.pipe(secret, v.nonEmpty('is not set'));

/** `SUBSCRIBER_PORTS`: comma-separated port numbers, all or nothing. */
const subscriberPorts = v.pipe(
  text,
  v.transform((value) => (value === '' ? [] : value.split(',').map((part) => part.trim()))),
  v.check(
    (ports) =>
      ports.every((port) => /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535),
    'expected comma-separated port numbers from 1 to 65535',
  ),
  v.transform((ports): ReadonlySet<number> => new Set([...STANDARD_PORTS, ...ports.map(Number)])),
);

/** `GATEWAY_CALLERS`: a JSON array of `{ name, token, routes? }`. */
const callers = v.pipe(
  requiredSecret,
  v.rawTransform<string, readonly Caller[]>(({ dataset, addIssue, NEVER }) => {
    let json: unknown;
    try {
      json = JSON.parse(dataset.value);
    } catch {
      // The parser's message quotes the input, which holds tokens: never repeat it.
      addIssue({ message: 'expected a JSON array of { name, token, routes? }: not valid JSON' });
      return NEVER;
    }
    const result = v.safeParse(CallersSchema, json);
    if (result.success) return result.output;
    addIssue({
      message: `expected a JSON array of { name, token, routes? } (${describeIssues(result.issues)})`,
    });
    return NEVER;
  }),
);

/** `GATEWAY_MODE`. */
const mode = v.pipe(
  text,
  v.transform((value) => (value === '' ? 'production' : value)),
  v.picklist(['local', 'production'], 'expected local or production'),
);

/** The entries of the settings schema, one per variable or secret the gateway reads. */
const ENTRIES = {
  GATEWAY_MODE: mode,
  UPSTREAM_BASE_URL: v.pipe(requiredText, absoluteUrl(['http:', 'https:'], 'an http(s) URL')),
  UPSTREAM_TIMEOUT_MS: wholeNumber(30_000, 1, 600_000, 'milliseconds'),
  UPSTREAM_KEY_ID: requiredSecret,
  UPSTREAM_SECRET: requiredSecret,
  MAX_BODY_BYTES: wholeNumber(65_536, 1, MAX_REQUEST_BODY_BYTES, 'bytes'),
  IDEMPOTENCY_RETENTION_SEC: wholeNumber(86_400, 60, 31_536_000, 'seconds'),
  IDEMPOTENCY_LOCK_TIMEOUT_SEC: wholeNumber(60, 1, 86_400, 'seconds'),
  BANKS_CACHE_TTL_SEC: cacheLifetime(3600),
  RESOLVE_CACHE_TTL_SEC: cacheLifetime(300),
  RATE_LIMIT_PER_MINUTE: wholeNumber(DEFAULT_RATE_LIMIT_PER_MINUTE, 0, 1_000_000, 'requests'),
  GATEWAY_CALLERS: callers,
  ADMIN_TOKEN: token,
  WEBHOOK_SECRET: secret,
  ALLOW_UNSIGNED_WEBHOOKS: flag(false),
  CONFIRM_MONEY_EVENTS: flag(true),
  ALLOW_LOCAL_SUBSCRIBERS: flag(false),
  SUBSCRIBER_PORTS: subscriberPorts,
  SUBSCRIBER_DNS_RESOLVER: v.pipe(
    text,
    v.transform((value) => (value === '' ? DEFAULT_DNS_RESOLVER : value)),
    absoluteUrl(['https:'], 'an https URL'),
  ),
  RELAY_RETENTION_DAYS: wholeNumber(30, 1, 3650, 'days'),
} as const;

/** The name of a variable or secret the gateway reads. */
export type SettingName = keyof typeof ENTRIES;

/** Every variable and secret the gateway reads, in the order problems are reported. */
export const SETTING_NAMES = Object.freeze(Object.keys(ENTRIES) as SettingName[]);

type Parsed = v.InferOutput<v.ObjectSchema<typeof ENTRIES, undefined>>;

/**
 * A production rule about `variable`: it holds in local mode, and runs only when
 * `variable` and `GATEWAY_MODE` are valid on their own (so every problem is reported at once).
 */
function rule(
  variable: SettingName,
  holds: (parsed: Parsed) => boolean,
  message: string,
): v.BaseValidation<Parsed, Parsed, v.BaseIssue<unknown>> {
  // valibot types each path of a partial check from literals; this one is computed.
  const check = v.partialCheck(
    [['GATEWAY_MODE'], [variable]] as never,
    ((input: Parsed) => input.GATEWAY_MODE === 'local' || holds(input)) as never,
    message,
  ) as unknown as v.BaseValidation<Parsed, Parsed, v.BaseIssue<unknown>>;
  return v.forward(check, [variable] as never);
}

/**
 * The settings schema: each variable on its own, then the rules between them (the
 * production rules hold outside local mode only), then the {@link Settings} object.
 */
const SettingsSchema = v.pipe(
  v.object(ENTRIES),
  rule(
    'UPSTREAM_BASE_URL',
    (p) => p.UPSTREAM_BASE_URL.startsWith('https:'),
    'must be an https URL outside local mode',
  ),
  rule(
    'WEBHOOK_SECRET',
    (p) => p.WEBHOOK_SECRET !== '',
    'must be set outside local mode (the provider signs webhooks with it)',
  ),
  rule(
    'ALLOW_UNSIGNED_WEBHOOKS',
    (p) => !p.ALLOW_UNSIGNED_WEBHOOKS,
    'is a development switch, refused outside local mode',
  ),
  rule(
    'ALLOW_LOCAL_SUBSCRIBERS',
    (p) => !p.ALLOW_LOCAL_SUBSCRIBERS,
    'is a development switch, refused outside local mode',
  ),
  rule(
    'RATE_LIMIT_PER_MINUTE',
    (p) => p.RATE_LIMIT_PER_MINUTE > 0,
    `must be at least 1 outside local mode (unset for ${DEFAULT_RATE_LIMIT_PER_MINUTE})`,
  ),
  rule(
    'GATEWAY_CALLERS',
    (p) => p.GATEWAY_CALLERS.every((caller) => caller.token.length >= MIN_TOKEN_LENGTH),
    `every token must be at least ${MIN_TOKEN_LENGTH} characters outside local mode`,
  ),
  rule(
    'ADMIN_TOKEN',
    (p) => p.ADMIN_TOKEN === '' || p.ADMIN_TOKEN.length >= MIN_TOKEN_LENGTH,
    `must be at least ${MIN_TOKEN_LENGTH} characters outside local mode`,
  ),
  // In every mode: an admin token that is also a caller's would open the admin API to it.
  v.forward(
    v.partialCheck(
      [['ADMIN_TOKEN'], ['GATEWAY_CALLERS']],
      (p) => !p.GATEWAY_CALLERS.some((caller) => sameSecret(caller.token, p.ADMIN_TOKEN)),
      "must differ from every caller's token",
    ),
    ['ADMIN_TOKEN'],
  ),
  v.transform(toSettings),
);

function toSettings(p: Parsed): Settings {
  return deepFreeze({
    mode: p.GATEWAY_MODE,
    upstream: {
      baseUrl: p.UPSTREAM_BASE_URL,
      timeoutMs: p.UPSTREAM_TIMEOUT_MS,
      keyId: p.UPSTREAM_KEY_ID,
      secret: p.UPSTREAM_SECRET,
    },
    maxBodyBytes: p.MAX_BODY_BYTES,
    idempotency: {
      retentionSec: p.IDEMPOTENCY_RETENTION_SEC,
      lockTimeoutSec: p.IDEMPOTENCY_LOCK_TIMEOUT_SEC,
    },
    cacheTtlSec: { banks: p.BANKS_CACHE_TTL_SEC, resolve: p.RESOLVE_CACHE_TTL_SEC },
    rateLimitPerMinute: p.RATE_LIMIT_PER_MINUTE,
    callers: p.GATEWAY_CALLERS,
    adminToken: p.ADMIN_TOKEN === '' ? undefined : p.ADMIN_TOKEN,
    webhooks: {
      secret: p.WEBHOOK_SECRET === '' ? undefined : p.WEBHOOK_SECRET,
      allowUnsigned: p.ALLOW_UNSIGNED_WEBHOOKS,
    },
    confirmMoneyEvents: p.CONFIRM_MONEY_EVENTS,
    subscribers: {
      allowLocal: p.ALLOW_LOCAL_SUBSCRIBERS,
      ports: p.SUBSCRIBER_PORTS,
      dnsResolver: p.SUBSCRIBER_DNS_RESOLVER,
    },
    relayRetentionDays: p.RELAY_RETENTION_DAYS,
  });
}

// Two tokens compared without revealing, by timing, how much of them matched.
function sameSecret(a: string, b: string): boolean {
  return a !== '' && b !== '' && timingSafeEqual(a, b);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    // A Set's contents cannot be frozen; it is typed ReadonlySet, and nothing adds to it.
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/**
 * Paths and expectations of schema issues, never the received values (they may be tokens).
 * Our own checks' messages are fixed strings.
 */
function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const path = issue.path?.map((item) => String(item.key)).join('.') || '(root)';
      if (issue.type === 'check') return `${path}: ${issue.message}`;
      return `${path}: expected ${issue.expected ?? issue.type}`;
    })
    .join('; ');
}

/**
 * Reads the settings from the Worker's variables and secrets, without throwing: the
 * deploy check and the health check list the problems, request handling uses
 * {@link settingsOf}.
 *
 * @param env - the variables and secrets (other bindings are ignored); unset ones count
 *   as empty.
 * @returns the frozen settings, or every problem found (one per variable at most, in
 *   {@link SETTING_NAMES} order).
 */
export function parseSettings(env: Partial<Record<SettingName, unknown>>): LoadedSettings {
  const result = v.safeParse(SettingsSchema, env);
  if (result.success) return { ok: true, settings: result.output };
  const problems = new Map<SettingName, string>();
  for (const issue of result.issues) {
    const variable = issue.path?.[0]?.key as SettingName | undefined;
    if (variable !== undefined && !problems.has(variable)) problems.set(variable, issue.message);
  }
  return {
    ok: false,
    problems: SETTING_NAMES.filter((name) => problems.has(name)).map((variable) => ({
      variable,
      problem: problems.get(variable) ?? 'invalid',
    })),
  };
}

/** The settings read per `env` object, and per set of values for `env` objects not seen yet. */
const byEnv = new WeakMap<object, LoadedSettings>();
const byValues = new Map<string, LoadedSettings>();
/** Enough for every distinct `env` an isolate sees in practice (tests pass a few dozen). */
const MAX_REMEMBERED = 64;

/**
 * The settings of `env`, read once per isolate (per distinct set of values): a new
 * invalid configuration is logged once (`config_invalid` per variable, with the
 * problem, never the value).
 *
 * @param env - the Worker's bindings (`Env`); only the settings are read.
 * @returns the settings or the problems.
 */
export function loadSettings(env: object): LoadedSettings {
  const known = byEnv.get(env);
  if (known !== undefined) return known;
  const values = SETTING_NAMES.map((name) => {
    const value: unknown = (env as unknown as Record<string, unknown>)[name];
    if (typeof value === 'string') return `s${value}`;
    // Numbers and booleans are read as their text; other kinds are refused whatever they hold.
    return typeof value === 'number' || typeof value === 'boolean' ? `n${value}` : typeof value;
  }).join('\u0000');
  let loaded = byValues.get(values);
  if (loaded === undefined) {
    loaded = parseSettings(env as unknown as Record<SettingName, unknown>);
    if (byValues.size >= MAX_REMEMBERED) byValues.clear();
    byValues.set(values, loaded);
    if (!loaded.ok) {
      for (const { variable, problem } of loaded.problems) {
        logEvent('error', 'config_invalid', { setting: variable, problem });
      }
    }
  }
  byEnv.set(env, loaded);
  return loaded;
}

/**
 * 503 `configuration_error`: the configuration is invalid. The message names the
 * variables, never their values nor what is wrong with them (the log says that).
 */
export class ConfigurationError extends HttpError {
  override name = 'ConfigurationError';
  /** The invalid variables. */
  readonly variables: readonly SettingName[];

  /** @param variables - the invalid variables, at least one. */
  constructor(variables: readonly SettingName[]) {
    super(
      503,
      'configuration_error',
      `The gateway is misconfigured: ${variables.join(', ')} (the log says why)`,
    );
    this.variables = variables;
  }
}

/**
 * The settings of `env` (see {@link loadSettings}), for request handling.
 *
 * @param env - the Worker's bindings.
 * @returns the frozen settings.
 * @throws {ConfigurationError} 503 `configuration_error` naming every invalid variable.
 */
export function settingsOf(env: object): Settings {
  const loaded = loadSettings(env);
  if (!loaded.ok) throw new ConfigurationError(loaded.problems.map((p) => p.variable));
  return loaded.settings;
}
