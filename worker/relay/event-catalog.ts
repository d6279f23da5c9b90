/**
 * The event-type catalog: every event type the relay knows, with a one-line description and
 * the schema of its `data`. The payment service's types take their schemas from the SDK's
 * webhook schemas (lib/webhooks.ts), the relay's own from worker/relay/operational-event-schemas.ts,
 * so no shape is written twice. `GET /admin/event-types` publishes it, subscriptions are
 * checked against it, and the OpenAPI document's `webhooks` section is built from it.
 */
import { type JsonSchema, toJsonSchema } from '@valibot/to-json-schema';
import { closest, distance } from 'fastest-levenshtein';
import type * as v from 'valibot';
import { GenericEventSchema, KnownEventSchema } from '../../lib/shared.ts';
import { OPERATIONAL_DATA_SCHEMAS } from './operational-event-schemas.ts';

/**
 * Where an event type comes from: `spec` (named by the payment API's specification),
 * `sandbox` (sent by the provider's sandbox and the local emulator, not named by the spec),
 * `relay` (the gateway's own operational events).
 */
type EventTypeOrigin = (typeof EVENT_TYPE_ORIGINS)[number];

/** Every {@link EventTypeOrigin}, in catalog order. */
export const EVENT_TYPE_ORIGINS = Object.freeze(['spec', 'sandbox', 'relay'] as const);

/** One event type of the catalog. */
export interface EventTypeEntry {
  readonly type: string;
  readonly origin: EventTypeOrigin;
  /** One line: what happened when this event is sent. */
  readonly description: string;
  /** The valibot schema of its `data`. */
  readonly data: v.GenericSchema;
  /** Who receives it, when not the rule of its origin (a test goes to one subscription). */
  readonly audience?: string;
}

// The `data` schema the SDK checks each spec type with, by type.
const SDK_DATA = new Map<string, v.GenericSchema>(
  KnownEventSchema.options.map((option) => [
    option.entries.event_type.literal,
    option.entries.data,
  ]),
);

function sdkData(type: string): v.GenericSchema {
  const data = SDK_DATA.get(type);
  if (data === undefined) throw new Error(`The SDK has no webhook schema for ${type}`);
  return data;
}

/** What the SDK reads a type it does not name as: an open object. */
const OPEN_DATA = GenericEventSchema.entries.data;

/**
 * The catalog, spec types first, then the sandbox's, then the relay's own. A transfer's
 * failure, expiry and reversal carry the same `data` as its success (reference, amount,
 * currency, metadata); refunds and virtual-account credits are read by the SDK as open
 * objects, so that is what is published for them.
 */
export const EVENT_TYPE_CATALOG: readonly EventTypeEntry[] = Object.freeze([
  {
    type: 'charge_success',
    origin: 'spec',
    description: 'A checkout was paid: the payment’s reference, amount and currency.',
    data: sdkData('charge_success'),
  },
  {
    type: 'disbursement_success',
    origin: 'spec',
    description: 'A transfer (disbursement) reached its beneficiary.',
    data: sdkData('disbursement_success'),
  },
  {
    type: 'direct_debit_success',
    origin: 'spec',
    description: 'A direct debit on a mandate was collected.',
    data: sdkData('direct_debit_success'),
  },
  {
    type: 'direct_debit_failure',
    origin: 'spec',
    description: 'A direct debit on a mandate was rejected by the bank.',
    data: sdkData('direct_debit_failure'),
  },
  {
    type: 'mandate_activated',
    origin: 'spec',
    description: 'A direct-debit mandate was activated by its customer.',
    data: sdkData('mandate_activated'),
  },
  {
    type: 'disbursement_failed',
    origin: 'sandbox',
    description: 'A transfer failed; its amount and fee went back to the balance.',
    data: sdkData('disbursement_success'),
  },
  {
    type: 'disbursement_expired',
    origin: 'sandbox',
    description: 'A transfer expired before it was processed; amount and fee went back.',
    data: sdkData('disbursement_success'),
  },
  {
    type: 'disbursement_reversed',
    origin: 'sandbox',
    description: 'A successful transfer was reversed by the bank; amount and fee went back.',
    data: sdkData('disbursement_success'),
  },
  {
    type: 'refund_success',
    origin: 'sandbox',
    description: 'A refund was paid back to the customer.',
    data: OPEN_DATA,
  },
  {
    type: 'refund_failed',
    origin: 'sandbox',
    description: 'A refund failed.',
    data: OPEN_DATA,
  },
  {
    type: 'virtual_account_credit',
    origin: 'sandbox',
    description: 'An inbound transfer credited a virtual account.',
    data: OPEN_DATA,
  },
  {
    type: 'subscription.disabled',
    origin: 'relay',
    description: 'The relay disabled a subscription (410 Gone, or failing for too long).',
    data: OPERATIONAL_DATA_SCHEMAS['subscription.disabled'],
  },
  {
    type: 'delivery.dead_lettered',
    origin: 'relay',
    description: 'A delivery ran out of attempts and failed for good.',
    data: OPERATIONAL_DATA_SCHEMAS['delivery.dead_lettered'],
  },
  {
    type: 'event.unconfirmed',
    origin: 'relay',
    description: 'A money event could not be confirmed with the payment service; not delivered.',
    data: OPERATIONAL_DATA_SCHEMAS['event.unconfirmed'],
  },
  {
    type: 'relay.backlog',
    origin: 'relay',
    description: 'The oldest pending delivery has waited longer than RELAY_BACKLOG_ALERT_SEC.',
    data: OPERATIONAL_DATA_SCHEMAS['relay.backlog'],
  },
  {
    type: 'subscription.test',
    origin: 'relay',
    description: 'An operator sent a test event to one subscription to check its receiver.',
    data: OPERATIONAL_DATA_SCHEMAS['subscription.test'],
    audience:
      'Sent only by `POST /admin/subscriptions/{id}/test`, to that subscription alone, ' +
      'whatever its `event_types`.',
  },
]);

/** Every type of {@link EVENT_TYPE_CATALOG}. */
export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_TYPE_CATALOG.map((entry) => entry.type),
);

/**
 * The JSON Schema (2020-12) of a valibot `data` schema, as a subscriber receives it.
 *
 * @param data - one catalog entry's `data`.
 * @throws {Error} when the schema uses a valibot feature the converter cannot describe.
 */
export function dataJsonSchema(data: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, ...schema } = toJsonSchema(data, {
    target: 'draft-2020-12',
    typeMode: 'output',
    errorMode: 'throw',
    // Open objects say so: generators read an object without `additionalProperties` as closed.
    overrideSchema: ({ valibotSchema, jsonSchema }) =>
      valibotSchema.type === 'loose_object'
        ? { ...jsonSchema, additionalProperties: true }
        : undefined,
  });
  return schema;
}

/** Longest edit distance at which a known type is offered as "did you mean". */
const MAX_SUGGESTION_DISTANCE = 3;

/**
 * The known event type closest to an unknown one (Levenshtein distance), when it is near
 * enough to be a likely typo.
 *
 * @param type - the type asked for.
 * @returns the suggestion, or `undefined` when none is within 3 edits.
 */
export function closestEventType(type: string): string | undefined {
  const candidates = [...KNOWN_EVENT_TYPES];
  const best = closest(type, candidates);
  return distance(type, best) <= MAX_SUGGESTION_DISTANCE ? best : undefined;
}
