// The success bodies of the proxied routes. The gateway passes the payment service's success
// answer through byte for byte, so what a caller gets is the service's answer, in whichever
// of its variants it came (enveloped `{ status, message, data }` or flat; a list's counts at
// the top, under `data`, its items under `data`, `records` or `items`). The records inside are
// the SDK's own response schemas (lib/responses/), converted like the request schemas; only
// the variants around them are said here, as the SDK's readers (lib/responses/envelope.ts)
// accept them.
import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { NamedEndpoint } from '../../lib/index.ts';
import {
  ActivationChallengeSchema,
  BankSchema,
  DebitSchema,
  itemsOf,
  MandateSchema,
  MandateStateSchema,
  OptionalMetadata,
  OptionalText,
  PaymentSchema,
  PaymentSessionSchema,
  RefundCountsSchema,
  RefundSchema,
  ResolvedAccountSchema,
  ResponseAmount,
  TransferSchema,
  VirtualAccountSchema,
  VirtualAccountTransactionSchema,
} from '../../lib/shared.ts';
import { componentName } from './parameters.ts';

type SchemaRef = (name: string) => string;

/** The SDK's response record schemas, by component name. */
const RECORDS: Readonly<Record<string, v.GenericSchema>> = Object.freeze({
  Payment: PaymentSchema,
  PaymentSession: PaymentSessionSchema,
  Transfer: TransferSchema,
  Refund: RefundSchema,
  RefundCounts: RefundCountsSchema,
  Bank: BankSchema,
  ResolvedAccount: ResolvedAccountSchema,
  Mandate: MandateSchema,
  MandateState: MandateStateSchema,
  ActivationChallenge: ActivationChallengeSchema,
  Debit: DebitSchema,
  VirtualAccount: VirtualAccountSchema,
  VirtualAccountTransaction: VirtualAccountTransactionSchema,
});

/**
 * The records whose schema first moves a state field of the service's to `status`
 * (lib/responses/transfers.ts, refunds.ts): on the wire a record carries one or the other.
 */
const STATE_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  Transfer: 'transfer_status',
  Refund: 'refund_status',
});

/**
 * The valibot schemas of the records as the service sends them, by component name: a record
 * schema that first renames a field (a pipe ending in the object schema) is published as
 * that object, the rename being added by {@link finishRecords}.
 *
 * @returns schemas to convert with the request schemas.
 */
export function recordSchemas(): Record<string, v.GenericSchema> {
  return Object.fromEntries(
    Object.entries(RECORDS).map(([name, schema]) => {
      const pipe = (schema as { pipe?: readonly v.GenericSchema[] }).pipe;
      return [name, pipe === undefined ? schema : (pipe[pipe.length - 1] as v.GenericSchema)];
    }),
  );
}

/** What the response field schemas' `custom` predicates accept (lib/responses/common.ts). */
export const RESPONSE_CUSTOM_SCHEMAS: ReadonlyMap<unknown, JsonSchema> = new Map<
  unknown,
  JsonSchema
>([
  [
    ResponseAmount.pipe[0],
    {
      description: 'An amount in major units: a JSON number, or a decimal string.',
      anyOf: [{ type: 'number' }, { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' }],
    },
  ],
  [OptionalText.wrapped, { type: ['string', 'null'] }],
  [
    OptionalMetadata.wrapped,
    {
      type: ['object', 'null'],
      additionalProperties: true,
      description: 'The metadata sent when the record was created, returned unchanged.',
    },
  ],
]);

/**
 * Completes the converted records: a renamed state field is accepted under either name (one
 * of the two present).
 *
 * @param schemas - the converted components; changed in place.
 * @throws {Error} when a renamed record has no `status`.
 */
export function finishRecords(schemas: Record<string, JsonSchema>): void {
  for (const [name, field] of Object.entries(STATE_FIELDS)) {
    const record = schemas[name];
    if (record?.properties?.status === undefined) throw new Error(`${name} has no status`);
    record.properties[field] = record.properties.status;
    record.required = (record.required ?? []).filter((key) => key !== 'status');
    // Each branch names the property it requires, as strict validators (Ajv) ask.
    record.anyOf = ['status', field].map((key) => ({
      required: [key],
      properties: { [key]: record.properties?.status ?? {} },
    }));
  }
}

/**
 * The JSON Schema of a proxied route's success body: the record the SDK reads from it, in
 * the variants it reads it from. An answer the SDK completes from the request that was sent
 * refers to `Partial<Record>`, a copy without required fields, added to `schemas` here.
 *
 * @param endpoint - the route's endpoint.
 * @param schemas - the converted components, records finished; may gain a `Partial<Record>`.
 * @param ref - `$ref` of a schema component by name.
 * @returns the schema.
 * @throws {Error} when the endpoint's response is none of the record schemas.
 */
export function answerSchema(
  endpoint: NamedEndpoint,
  schemas: Record<string, JsonSchema>,
  ref: SchemaRef,
): JsonSchema {
  const name = recordName(endpoint.response);
  if (isPaged(endpoint)) return pageAnswer({ $ref: ref(name) });
  if (endpoint.shape === itemsOf) {
    const items: JsonSchema = { type: 'array', items: { $ref: ref(name) } };
    return { anyOf: [items, enveloped(items)] };
  }
  // A shape that also reads the request fills in what the answer leaves out.
  const filled = endpoint.shape.length >= 2;
  if (filled) schemas[`Partial${name}`] ??= partial(schemas[name]);
  const record = { $ref: ref(filled ? `Partial${name}` : name) };
  const probe = { status: 'success', data: { probe: true } };
  // A shape giving the answer back as it is reads the flat variant only.
  if (endpoint.shape(probe, undefined) === probe) return record;
  // The SDK reads an answer whose `data` is an object as the envelope, anything else as the
  // flat record: the flat branch must not take an envelope whose record is wrong.
  const envelope: JsonSchema = { required: ['data'], properties: { data: { type: 'object' } } };
  const flat: JsonSchema = { ...record, not: envelope };
  return { anyOf: [enveloped(record), flat] };
}

/** The name a proxied route's success body is published under. */
export function answerName(routeName: string): string {
  return componentName(routeName, 'Response');
}

function partial(record: JsonSchema | undefined): JsonSchema {
  const { required: _required, anyOf: _anyOf, ...rest } = record ?? {};
  return {
    ...rest,
    description: 'Any field may be left out: the SDK takes those from the request that was sent.',
  };
}

function recordName(response: v.GenericSchema): string {
  const item = (response as { item?: v.GenericSchema }).item ?? response;
  const found = Object.entries(RECORDS).find(([, schema]) => schema === item);
  if (found === undefined) throw new Error('An endpoint answers with an unnamed record schema');
  return found[0];
}

// A list endpoint's query has `page` (lib/endpoints.ts: its response is a page).
function isPaged(endpoint: NamedEndpoint): boolean {
  const query = endpoint.query as
    | { entries?: object; pipe?: readonly { entries?: object }[] }
    | undefined;
  const entries = query?.entries ?? query?.pipe?.[0]?.entries;
  return entries !== undefined && 'page' in entries;
}

function enveloped(data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['status', 'data'],
    properties: { status: { type: 'string' }, message: { type: 'string' }, data },
  };
}

const COUNT: JsonSchema = { type: 'integer', minimum: 0 };
const PAGE_NUMBER: JsonSchema = { type: 'integer', minimum: 1 };

// A page as `pageOf` reads it: the counts and the items together, at the top level or under
// `data`; the items under `data`, `records` or `items`; `page` and the page size may be left
// out (they are then the ones asked for).
function pageAnswer(item: JsonSchema): JsonSchema {
  const items: JsonSchema = { type: 'array', items: item };
  const page: JsonSchema = {
    type: 'object',
    required: ['total'],
    properties: { total: COUNT, page: PAGE_NUMBER, pageSize: PAGE_NUMBER, page_size: PAGE_NUMBER },
    anyOf: ['data', 'records', 'items'].map((field) => ({
      required: [field],
      properties: { [field]: items },
    })),
  };
  return {
    anyOf: [
      {
        ...page,
        properties: { status: { type: 'string' }, message: { type: 'string' }, ...page.properties },
      },
      enveloped(page),
    ],
  };
}
