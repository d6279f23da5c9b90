/**
 * The rules between settings, checked once each setting is valid on its own: every
 * row's production rule (lifted in local mode), and the one rule of every mode, that the
 * admin token is no caller's token.
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

/** The production rule of each row that has one: it holds in local mode. */
const PRODUCTION_RULES: readonly Rule[] = SETTING_NAMES.flatMap((name) => {
  const rule = SETTINGS[name].production as
    | { holds(value: unknown): boolean; problem: string }
    | undefined;
  if (rule === undefined) return [];
  return [
    ruleAbout(
      name,
      ['GATEWAY_MODE', name],
      (parsed) => parsed.GATEWAY_MODE === 'local' || rule.holds(parsed[name]),
      rule.problem,
    ),
  ];
});

// In every mode: an admin token that is also a caller's would open the admin API to it.
const ADMIN_TOKEN_IS_NO_CALLERS: Rule = ruleAbout(
  'ADMIN_TOKEN',
  ['ADMIN_TOKEN', 'GATEWAY_CALLERS'],
  (parsed) =>
    !parsed.GATEWAY_CALLERS.some((caller) => sameSecret(caller.token, parsed.ADMIN_TOKEN)),
  "must differ from every caller's token",
);

/**
 * `schema` followed by the rules between settings: the production rules in table order,
 * then the admin token's.
 *
 * @param schema - the object schema reading each setting on its own.
 * @returns the schema with the rules, reporting each broken rule against its variable.
 */
export function withRules(
  schema: v.GenericSchema<unknown, ParsedSettings>,
): v.GenericSchema<unknown, ParsedSettings> {
  return [...PRODUCTION_RULES, ADMIN_TOKEN_IS_NO_CALLERS].reduce<
    v.GenericSchema<unknown, ParsedSettings>
  >((checked, rule) => v.pipe(checked, rule), schema);
}

// Two tokens compared without revealing, by timing, how much of them matched.
function sameSecret(a: string, b: string | undefined): boolean {
  return a !== '' && b !== undefined && b !== '' && timingSafeEqual(a, b);
}
