/**
 * One row of the settings table: a variable or secret, how its text is read, what an
 * unset value means, where the value goes in `Settings`, its documentation line and its
 * production rule. {@link setting} builds a row's whole schema from those facts, and
 * {@link SettingsOf} infers the `Settings` type from the rows.
 */
import * as v from 'valibot';
import { secretText, variableText } from './values.ts';

/** `var`: set in `wrangler.toml` (trimmed); `secret`: set with `wrangler secret put`, used as set. */
type SettingKind = 'var' | 'secret';

/**
 * What an unset or empty setting means: `default`, the text used instead (as it would be
 * written in `wrangler.toml`); `required`, an error (`is not set`); `off`, the value is
 * `undefined` and the text says what is then off.
 */
type WhenUnset =
  | { readonly default: string }
  | { readonly required: true }
  | { readonly off: string };

/**
 * A rule that holds in local mode and is enforced outside it.
 *
 * `holds` takes the setting's parsed value; `problem` is the whole message when it does
 * not hold (it says "outside local mode", and never quotes the value).
 */
interface ProductionRule<T> {
  // A method, so a row of any value type is a row of `unknown` values.
  holds(value: T): boolean;
  readonly problem: string;
}

/** What a row of the table says, before its schema is built. */
interface SettingFacts<TField extends string, TValue, TUnset extends WhenUnset> {
  readonly kind: SettingKind;
  readonly unset: TUnset;
  /** Reads the text once trimmed (variables) and defaulted; never sees an empty unset value. */
  readonly value: v.GenericSchema<string, TValue>;
  /** Where the value goes in `Settings`: a property name, or two joined by a dot. */
  readonly field: TField;
  /** What values are accepted and what they do: one line of docs/configuration.md. */
  readonly doc: string;
  /** The production rules, checked in order; the first broken one is reported. */
  readonly production?: readonly ProductionRule<ValueOf<TValue, TUnset>>[];
}

type ValueOf<TValue, TUnset> = TUnset extends { readonly off: string }
  ? TValue | undefined
  : TValue;

/** A row of the settings table, with the schema that reads the setting from `env`. */
interface Setting<TField extends string = string, TOutput = unknown> {
  readonly kind: SettingKind;
  readonly unset: WhenUnset;
  readonly field: TField;
  readonly doc: string;
  readonly production?: readonly ProductionRule<TOutput>[];
  /** The whole reader: the binding's text, the default or the unset rule, then the value. */
  readonly schema: v.GenericSchema<unknown, TOutput>;
}

/**
 * A row of the settings table.
 *
 * @param facts - the row: kind, meaning of unset, value schema, target field, doc line and
 *   the optional production rule.
 * @returns the row with its whole `schema`.
 */
export function setting<TField extends string, TValue, TUnset extends WhenUnset>(
  facts: SettingFacts<TField, TValue, TUnset>,
): Setting<TField, ValueOf<TValue, TUnset>> {
  const { value: _value, ...row } = facts;
  return { ...row, schema: readerOf(facts) as v.GenericSchema<unknown, ValueOf<TValue, TUnset>> };
}

function readerOf<TValue>(facts: SettingFacts<string, TValue, WhenUnset>): v.GenericSchema {
  const text = facts.kind === 'secret' ? secretText : variableText;
  const { unset } = facts;
  if ('default' in unset) {
    return v.pipe(
      text,
      v.transform((value) => (value === '' ? unset.default : value)),
      facts.value,
    );
  }
  if ('required' in unset) return v.pipe(text, v.nonEmpty('is not set'), facts.value);
  return v.pipe(
    text,
    v.transform((value) => (value === '' ? undefined : value)),
    v.optional(facts.value),
  );
}

/** A row's value at its target field, as one leaf of the settings object. */
type LeafOf<TRow> = TRow extends Setting
  ? { readonly path: TRow['field']; readonly value: v.InferOutput<TRow['schema']> }
  : never;

type Leaf = { readonly path: string; readonly value: unknown };
type Head<TPath extends string> = TPath extends `${infer First}.${string}` ? First : TPath;
type Below<TLeaf extends Leaf, TName extends string> = TLeaf extends {
  readonly path: `${TName}.${infer Rest}`;
  readonly value: infer TValue;
}
  ? { readonly path: Rest; readonly value: TValue }
  : never;

/** The object the leaves make: one property per first path segment, nested for dotted paths. */
type Nest<TLeaf extends Leaf> = {
  readonly [Name in Head<TLeaf['path']>]: [Extract<TLeaf, { readonly path: Name }>] extends [never]
    ? Nest<Below<TLeaf, Name>>
    : Extract<TLeaf, { readonly path: Name }>['value'];
};

/** The settings object a table of rows gives: each row's value at its `field`, all read-only. */
export type SettingsOf<TTable extends Record<string, Setting>> = Nest<LeafOf<TTable[keyof TTable]>>;
