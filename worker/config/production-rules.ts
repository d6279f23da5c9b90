/**
 * The rules between settings, checked once each setting is valid on its own: every
 * row's production rules and the production rules between settings (both lifted in
 * local mode), and the one rule of every mode, that the admin token is no caller's token.
 */
import * as v from 'valibot';
import { timingSafeEqual } from '../../lib/shared.ts';
import { SETTING_NAMES, SETTINGS, type SettingName } from './table.ts';

/** Each setting's value once read on its own, by variable name. */
export type ParsedSettings = {
  readonly [Name in SettingName]: v.InferOutput<(typeof SETTINGS)[Name]['schema']>;
};

type Rule = v.BaseValidation<ParsedSettings, ParsedSettings, v.BaseIssue<unknown>>;

/**
 * A check that runs only when `paths`' variables are valid on their own (so every problem
 * is reported at once), its issue reported against `variable`.
 */
function ruleAbout(
  variable: SettingName,
  paths: readonly SettingName[],
  holds: (parsed: ParsedSettings) => boolean,
  message: string,
): Rule {
  // valibot types each path of a partial check from literals; these are computed.
  const check = v.partialCheck(
    paths.map((path) => [path]) as never,
    holds as never,
    message,
  ) as unknown as Rule;
  return v.forward(check, [variable] as never);
}

/** The production rules of each row: they hold in local mode. */
const ROW_RULES: readonly Rule[] = SETTING_NAMES.flatMap((name) => {
  const rules = (SETTINGS[name].production ?? []) as readonly {
    holds(value: unknown): boolean;
    problem: string;
  }[];
  return rules.map((rule) =>
    ruleAbout(
      name,
      ['GATEWAY_MODE', name],
      (parsed) => parsed.GATEWAY_MODE === 'local' || rule.holds(parsed[name]),
      rule.problem,
    ),
  );
});

/** A production rule between settings, reported against `variable`. */
interface CrossRule {
  readonly variable: SettingName;
  /** The variables it reads; it is checked only once each is valid on its own. */
  readonly reads: readonly SettingName[];
  readonly holds: (parsed: ParsedSettings) => boolean;
  /** The whole message (it says "outside local mode", and never quotes a value). */
  readonly problem: string;
}

/**
 * The shortest idempotency retention outside local mode, in seconds: a client retrying
 * after an outage of up to an hour still finds its key.
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const MIN_PRODUCTION_RETENTION_SEC = 3600;

/**
 * The claim lock in seconds: the larger of the lock timeout and twice the upstream
 * timeout, as the proxy computes it (worker/proxy/settle-window.ts `claimLockMs`).
 */
function claimLockSec(parsed: ParsedSettings): number {
  return Math.max(
    parsed.IDEMPOTENCY_LOCK_TIMEOUT_SEC,
    Math.ceil((2 * parsed.UPSTREAM_TIMEOUT_MS) / 1000),
  );
}

/** Whether `secret` equals the merchant secret or the webhook secret. */
function isProviderSecret(parsed: ParsedSettings, secret: string): boolean {
  return sameSecret(secret, parsed.UPSTREAM_SECRET) || sameSecret(secret, parsed.WEBHOOK_SECRET);
}

/**
 * The production rules between settings, in the order they are checked. The merchant and
 * webhook secrets may be equal: the payment service signs its webhooks with the merchant
 * secret, the only scheme it describes.
 *
 * The health check reads which settings the admin token's rules read; the doc script and
 * the tests list and break them.
 */
export const CROSS_RULES: readonly CrossRule[] = [
  {
    // A retention shorter than the lock would drop a completed key while a retry of its
    // request may still be on its way; an hour covers a client's retries after an outage.
    variable: 'IDEMPOTENCY_RETENTION_SEC',
    reads: ['IDEMPOTENCY_RETENTION_SEC', 'IDEMPOTENCY_LOCK_TIMEOUT_SEC', 'UPSTREAM_TIMEOUT_MS'],
    holds: (parsed) =>
      parsed.IDEMPOTENCY_RETENTION_SEC >=
      Math.max(MIN_PRODUCTION_RETENTION_SEC, claimLockSec(parsed)),
    problem: `must be at least ${MIN_PRODUCTION_RETENTION_SEC} seconds and at least the claim lock (IDEMPOTENCY_LOCK_TIMEOUT_SEC, and twice UPSTREAM_TIMEOUT_MS) outside local mode`,
  },
  {
    // A caller's token that is also a signing secret would let that caller sign requests
    // or forge webhooks.
    variable: 'GATEWAY_CALLERS',
    reads: ['GATEWAY_CALLERS', 'UPSTREAM_SECRET', 'WEBHOOK_SECRET'],
    holds: (parsed) =>
      !parsed.GATEWAY_CALLERS.some((caller) => isProviderSecret(parsed, caller.token)),
    problem: 'every token must differ from UPSTREAM_SECRET and WEBHOOK_SECRET outside local mode',
  },
  {
    // The payment service knows the webhook (merchant) secret: it must not open the admin API.
    variable: 'ADMIN_TOKEN',
    reads: ['ADMIN_TOKEN', 'UPSTREAM_SECRET', 'WEBHOOK_SECRET'],
    holds: (parsed) =>
      parsed.ADMIN_TOKEN === undefined || !isProviderSecret(parsed, parsed.ADMIN_TOKEN),
    problem: 'must differ from UPSTREAM_SECRET and WEBHOOK_SECRET outside local mode',
  },
];

const BETWEEN_RULES: readonly Rule[] = CROSS_RULES.map((rule) =>
  ruleAbout(
    rule.variable,
    ['GATEWAY_MODE', ...rule.reads],
    (parsed) => parsed.GATEWAY_MODE === 'local' || rule.holds(parsed),
    rule.problem,
  ),
);

// In every mode: an admin token that is also a caller's would open the admin API to it.
const ADMIN_TOKEN_IS_NO_CALLERS: Rule = ruleAbout(
  'ADMIN_TOKEN',
  ['ADMIN_TOKEN', 'GATEWAY_CALLERS'],
  (parsed) =>
    !parsed.GATEWAY_CALLERS.some((caller) => sameSecret(caller.token, parsed.ADMIN_TOKEN)),
  "must differ from every caller's token",
);

/**
 * `schema` followed by the rules between settings: the rows' production rules in table
 * order, the production rules between settings, then the admin token's.
 *
 * @param schema - the object schema reading each setting on its own.
 * @returns the schema with the rules, reporting each broken rule against its variable.
 */
export function withRules(
  schema: v.GenericSchema<unknown, ParsedSettings>,
): v.GenericSchema<unknown, ParsedSettings> {
  return [...ROW_RULES, ...BETWEEN_RULES, ADMIN_TOKEN_IS_NO_CALLERS].reduce<
    v.GenericSchema<unknown, ParsedSettings>
  >((checked, rule) => v.pipe(checked, rule), schema);
}

// Two tokens compared without revealing, by timing, how much of them matched.
function sameSecret(a: string, b: string | undefined): boolean {
  return a !== '' && b !== undefined && b !== '' && timingSafeEqual(a, b);
}
