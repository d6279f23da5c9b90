/**
 * The readers of one setting's text: how a variable or a secret becomes text, and the
 * schemas that turn that text into a value (numbers, switches, URLs, ports, callers).
 * Every message here is a fixed text: an issue message must never quote the value it
 * judged (the value may be a secret), so no schema keeps valibot's default messages.
 */
import * as v from 'valibot';
import { type Caller, CallersSchema } from '../auth/callers.ts';
import { parseShardGenerations, type ShardGeneration } from '../db/shards.ts';

/** The shortest lifetime KV accepts (`expirationTtl`), in seconds; shorter ones are raised to it. */
const MIN_KV_TTL_SEC = 60;

/** The ports every subscriber URL may use: https and http. */
export const STANDARD_PORTS: readonly number[] = [443, 80];

const TRUE_WORDS: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['0', 'false', 'no', 'off']);

// Bearer tokens are visible ASCII (RFC 6750's b64token is a subset).
const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

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
export const variableText = v.pipe(
  asText,
  v.transform((value) => value.trim()),
);

/** A secret's value exactly as set (never trimmed: spaces may be part of it). */
export const secretText = asText;

/** A whole number of `unit` from `min` to `max`. */
export function wholeNumber(min: number, max: number, unit: string) {
  const message = `expected a whole number of ${unit} from ${min} to ${max}`;
  return v.pipe(
    v.string(),
    v.regex(/^\d{1,10}$/, message),
    v.transform(Number),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

/** A KV cache lifetime in seconds: `0` turns the cache off, 1 to 59 are raised to KV's minimum. */
export const cacheLifetime = v.pipe(
  wholeNumber(0, 31_536_000, 'seconds'),
  v.transform((ttl) => (ttl === 0 ? 0 : Math.max(ttl, MIN_KV_TTL_SEC))),
);

/** A switch: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`, in any case. */
export const flag = v.pipe(
  v.string(),
  v.transform((value) => value.toLowerCase()),
  v.check(
    (value) => TRUE_WORDS.has(value) || FALSE_WORDS.has(value),
    'expected true or false (also 1/0, yes/no, on/off)',
  ),
  v.transform((value) => TRUE_WORDS.has(value)),
);

/** A bearer token: visible ASCII only. */
export const token = v.pipe(
  v.string(),
  v.check((value) => VISIBLE_ASCII.test(value), 'expected visible ASCII only'),
);

/** Any text, as it is. */
export const anyText = v.string();

/** An absolute URL of one of `protocols`, without query, fragment or credentials; `what` names it. */
export function absoluteUrl(protocols: readonly string[], what: string) {
  return v.pipe(
    v.string(),
    v.rawTransform<string, string>(({ dataset, addIssue, NEVER }) => {
      const url = URL.canParse(dataset.value) ? new URL(dataset.value) : undefined;
      let problem: string | undefined;
      if (url === undefined || !protocols.includes(url.protocol)) problem = `expected ${what}`;
      else if (url.username !== '' || url.password !== '') problem = 'must not carry credentials';
      else if (url.search !== '' || url.hash !== '') problem = 'must not carry a query or fragment';
      if (problem === undefined && url !== undefined) return url.href;
      addIssue({ message: problem ?? `expected ${what}` });
      return NEVER;
    }),
  );
}

/** Comma-separated port numbers, all or nothing, added to the standard ports. */
export const subscriberPorts = v.pipe(
  v.string(),
  v.transform((value) => (value === '' ? [] : value.split(',').map((part) => part.trim()))),
  v.check(
    (ports) =>
      ports.every((port) => /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535),
    'expected comma-separated port numbers from 1 to 65535',
  ),
  v.transform((ports): ReadonlySet<number> => new Set([...STANDARD_PORTS, ...ports.map(Number)])),
);

/** A JSON array of `{ name, token, routes? }`: the gateway's callers. */
export const callers = v.pipe(
  v.string(),
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
 * `D1_SHARDS`: generations of D1 binding names (worker/db/shards.ts). The messages name
 * binding names and times only, which are not secrets.
 */
export const shardGenerations = v.pipe(
  v.string(),
  v.rawTransform<string, readonly ShardGeneration[]>(({ dataset, addIssue, NEVER }) => {
    const parsed = parseShardGenerations(dataset.value);
    if (typeof parsed !== 'string') return parsed;
    addIssue({ message: parsed });
    return NEVER;
  }),
);
