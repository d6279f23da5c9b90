/**
 * Reading the settings from `env`: one schema from the table and its rules, the result
 * kept per isolate, a new invalid configuration logged once, and the 503 request
 * handling answers while the settings are invalid.
 */
import * as v from 'valibot';
import { HttpError } from '../http/errors.ts';
import { logEvent } from '../http/log.ts';
import { type ParsedSettings, withRules } from './production-rules.ts';
import { SETTING_NAMES, SETTINGS, type SettingName, type Settings } from './table.ts';

/** One invalid setting: the variable's name and what is wrong, never its value. */
interface ConfigurationProblem {
  readonly variable: SettingName;
  readonly problem: string;
}

/** The outcome of reading the settings: the settings, or every problem found. */
export type LoadedSettings =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly problems: readonly ConfigurationProblem[] };

const ENTRIES = Object.fromEntries(SETTING_NAMES.map((name) => [name, SETTINGS[name].schema]));

/**
 * The settings schema: each variable on its own, then the rules between them (the
 * production rules hold outside local mode only), then the {@link Settings} object.
 */
const SettingsSchema = v.pipe(
  withRules(v.object(ENTRIES) as unknown as v.GenericSchema<unknown, ParsedSettings>),
  v.transform(toSettings),
);

// Each value at its row's field, in table order (which is the order of `Settings`' fields).
function toSettings(parsed: ParsedSettings): Settings {
  const settings: Record<string, Record<string, unknown>> = {};
  for (const name of SETTING_NAMES) {
    const [first = '', second] = SETTINGS[name].field.split('.');
    if (second === undefined) (settings as Record<string, unknown>)[first] = parsed[name];
    else {
      settings[first] ??= {};
      settings[first][second] = parsed[name];
    }
  }
  return deepFreeze(settings) as unknown as Settings;
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
 * Reads the settings from the Worker's variables and secrets, without throwing: the
 * deploy check and the health check list the problems, request handling uses
 * {@link settingsOf}.
 *
 * @param env - the variables and secrets (other bindings are ignored); unset ones count
 *   as empty.
 * @returns the frozen settings, or every problem found (one per variable at most, in
 *   `SETTING_NAMES` order).
 *
 * @internal Exported for the tests, which call it directly.
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
let byEnv = new WeakMap<object, LoadedSettings>();
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
 * Forgets every settings read and every problem logged, as a new isolate would start.
 *
 * @internal The worker tests run many files in one isolate; each file starts from this.
 */
export function forgetLoadedSettings(): void {
  byEnv = new WeakMap();
  byValues.clear();
  reportedProblems.clear();
}

/**
 * 503 `configuration_error`: the configuration is invalid. The message names the
 * variables, never their values nor what is wrong with them (the log says that).
 */
class ConfigurationError extends HttpError {
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

/** The problems {@link configurationError} has logged in this isolate. */
const reportedProblems = new Set<string>();

/**
 * The 503 of a setting found invalid where it is used rather than when the settings are
 * read (a binding it names is missing), logged as `config_invalid` like a problem the
 * schema finds, once per isolate.
 *
 * @param variable - the setting at fault.
 * @param problem - what is wrong, never quoting a secret.
 * @returns the error to throw: 503 `configuration_error` naming `variable`.
 */
export function configurationError(variable: SettingName, problem: string): HttpError {
  const reported = `${variable}\u0000${problem}`;
  if (!reportedProblems.has(reported)) {
    if (reportedProblems.size >= MAX_REMEMBERED) reportedProblems.clear();
    reportedProblems.add(reported);
    logEvent('error', 'config_invalid', { setting: variable, problem });
  }
  return new ConfigurationError([variable]);
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
