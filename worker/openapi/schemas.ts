// The SDK's valibot request schemas as JSON Schema 2020-12 (OpenAPI 3.1), via
// @valibot/to-json-schema. The converter runs in `errorMode: 'throw'`: a schema or action it
// cannot map, and no override below describes, fails the build (and the OpenAPI tests)
// instead of silently widening the published contract.
import {
  type ConversionConfig,
  type JsonSchema,
  type OverrideActionContext,
  type OverrideSchemaContext,
  toJsonSchemaDefs,
} from '@valibot/to-json-schema';
import * as v from 'valibot';
import {
  AccountNumberSchema,
  AmountSchema,
  BankCodeSchema,
  CurrencySchema,
  DATE_TIME,
  DateSchema,
  DateTimeSchema,
  DECIMAL_AMOUNT,
  EmailSchema,
  HttpUrlSchema,
  MAX_AMOUNT_MINOR,
  MetadataSchema,
  MINOR_PER_MAJOR,
  MINOR_UNIT_DIGITS,
  PageQuerySchema,
  PageSizeQuerySchema,
  ReferenceSchema,
} from '../../lib/shared.ts';
import { JsonObjectSchema } from '../relay/envelope.ts';
import { EventListQuerySchema } from '../routes/admin/event-list.ts';
import { RecoverySchema } from '../routes/admin/recover.ts';
import { SubscriptionChangesSchema } from '../routes/admin/subscription-input.ts';
import { RESPONSE_CUSTOM_SCHEMAS } from './answers.ts';

/** Where converted schemas live in the OpenAPI document. */
export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/**
 * The building blocks shared by the request schemas, published as named components
 * (`Amount`, `Reference`, ...) and referenced with `$ref` wherever a schema uses them.
 */
const SHARED_SCHEMAS: Readonly<Record<string, v.GenericSchema>> = Object.freeze({
  Amount: AmountSchema,
  Currency: CurrencySchema,
  Email: EmailSchema,
  Reference: ReferenceSchema,
  Date: DateSchema,
  DateTime: DateTimeSchema,
  HttpUrl: HttpUrlSchema,
  Metadata: MetadataSchema,
  BankCode: BankCodeSchema,
  AccountNumber: AccountNumberSchema,
});

// `custom` schemas (arbitrary predicates) have no JSON Schema equivalent: say what they accept.
const CUSTOM_SCHEMAS = new Map<unknown, JsonSchema>([
  [
    AmountSchema.pipe[0],
    {
      description:
        `A positive amount in major units with at most ${MINOR_UNIT_DIGITS} decimal places, ` +
        'as a decimal string or a JSON number (no sign, no exponent).',
      oneOf: [
        { type: 'string', pattern: DECIMAL_AMOUNT.source },
        { type: 'number', exclusiveMinimum: 0, maximum: MAX_AMOUNT_MINOR / MINOR_PER_MAJOR },
      ],
    },
  ],
  // Open: generators read an object schema without `additionalProperties` as closed.
  [
    MetadataSchema,
    {
      type: 'object',
      additionalProperties: true,
      description: 'Key-value pairs returned unchanged.',
    },
  ],
  // The webhook envelope's `data` (worker/relay/envelope.ts): an object, never an array.
  [JsonObjectSchema, { type: 'object', additionalProperties: true }],
  ...RESPONSE_CUSTOM_SCHEMAS,
]);

// What each `check` predicate of the shared schemas means, as JSON Schema keywords merged
// into the schema converted so far.
const CHECK_MEANINGS = new Map<v.GenericSchema, JsonSchema>([
  // The amount's custom schema above already says "positive, 2 decimals".
  [AmountSchema, {}],
  [ReferenceSchema, { not: { enum: ['.', '..'] } }],
  [DateSchema, { format: 'date' }],
  [
    DateTimeSchema,
    {
      // lib/schemas/dates.ts: a date, or a date-time with optional seconds, fraction and zone.
      pattern: DATE_TIME.source,
      description: 'An ISO 8601 date or date-time; without a zone it is UTC.',
    },
  ],
  [HttpUrlSchema, { format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?:' }],
  // The admin API's object-level checks (worker/routes/admin/). A PATCH needs at least one
  // field (JSON has no undefined, so at least one member); `to` must follow `from`.
  [SubscriptionChangesSchema, { minProperties: 1 }],
  [EventListQuerySchema, { description: 'Rule: Expected `to` to be later than `from`.' }],
  [RecoverySchema, { description: 'Rule: Expected `until` to be later than `since`.' }],
]);

const CHECK_ACTIONS = new Map<unknown, JsonSchema>(
  [...CHECK_MEANINGS].flatMap(([schema, meaning]) =>
    ('pipe' in schema ? (schema.pipe as readonly { type: string }[]) : [])
      .filter((item) => item.type === 'check')
      .map((item) => [item, meaning] as const),
  ),
);

// Query page numbers arrive as strings; the schema turns them into numbers, so they are
// published as integers with the bounds read from the schema's own min/max actions.
const PAGE_SCHEMAS: ReadonlySet<unknown> = new Set([PageQuerySchema, PageSizeQuerySchema]);

function overrideSchema(context: OverrideSchemaContext): JsonSchema | undefined {
  const schema = context.valibotSchema;
  const custom = CUSTOM_SCHEMAS.get(schema);
  if (custom !== undefined) return custom;
  if (!PAGE_SCHEMAS.has(schema)) return undefined;
  const page = schema as unknown as { wrapped: { pipe: readonly Requirement[] }; default: string };
  const bound = (type: string) => page.wrapped.pipe.find((item) => item.type === type)?.requirement;
  const minimum = bound('min_value');
  const maximum = bound('max_value');
  return {
    type: 'integer',
    ...(typeof minimum === 'number' ? { minimum } : {}),
    ...(typeof maximum === 'number' ? { maximum } : {}),
    default: Number(page.default),
  };
}

interface Requirement {
  readonly type: string;
  readonly requirement?: unknown;
}

function overrideAction(context: OverrideActionContext): JsonSchema | undefined {
  const action = context.valibotAction as {
    type: string;
    message?: unknown;
    requirement?: unknown;
  };
  const meaning = CHECK_ACTIONS.get(action);
  // The email rule is valibot's own email regex (whose `u` flag JSON Schema has no room for).
  if (action.type === 'regex' && action.requirement === v.EMAIL_REGEX) {
    const { pattern: _flagged, ...schema } = context.jsonSchema;
    return { ...schema, format: 'email' };
  }
  if (meaning !== undefined) return { ...context.jsonSchema, ...meaning };
  // Cross-field rules (date ranges, 30-day mandates, bank_code with account_number) are
  // not expressible per property: their message goes to the object's description.
  if (action.type === 'raw_check' && typeof action.message === 'string') {
    const before = context.jsonSchema.description;
    const rule = `Rule: ${action.message}.`;
    return { ...context.jsonSchema, description: before ? `${before} ${rule}` : rule };
  }
  return undefined;
}

/** The converter settings: request (input) types, JSON Schema 2020-12, refs into components. */
const CONVERSION: Omit<ConversionConfig, 'definitions'> = Object.freeze({
  target: 'draft-2020-12',
  typeMode: 'input',
  errorMode: 'throw',
  overrideSchema,
  overrideAction,
  overrideRef: (context) => `${SCHEMA_REF_PREFIX}${context.referenceId}`,
});

/**
 * Converts named valibot schemas, together with {@link SHARED_SCHEMAS}, to JSON Schema
 * components; shared pieces become `$ref`s to `#/components/schemas/<Name>`.
 *
 * @param named - schemas to convert, by component name.
 * @returns every converted schema by name (the shared ones included).
 * @throws {Error} when a schema uses a valibot feature with no override here.
 */
export function convertSchemas(
  named: Readonly<Record<string, v.GenericSchema>>,
): Record<string, JsonSchema> {
  return toJsonSchemaDefs({ ...SHARED_SCHEMAS, ...named }, CONVERSION);
}
