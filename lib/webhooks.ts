import * as v from 'valibot';
import { ResponseValidationError, SignatureVerificationError } from './errors.ts';
import { parseOrThrow } from './internal/issues.ts';
import { requireSecret } from './internal/secret.ts';
import type { Optional } from './schemas/common.ts';
import { DEFAULT_TOLERANCE_SEC, type RawBody, verifyRequestSignature } from './signing.ts';

const EnvelopeEntries: {
  readonly status: Optional<v.StringSchema<undefined>>;
  readonly message: Optional<v.StringSchema<undefined>>;
  readonly event_id: v.StringSchema<undefined>;
  readonly timestamp: v.StringSchema<undefined>;
} = {
  status: v.optional(v.string()),
  message: v.optional(v.string()),
  event_id: v.string(),
  timestamp: v.string(),
} as const;

const MoneyEventData: v.LooseObjectSchema<
  {
    readonly reference: v.StringSchema<undefined>;
    readonly amount: v.NumberSchema<undefined>;
    readonly currency: v.StringSchema<undefined>;
    readonly metadata: Optional<v.UnknownSchema>;
  },
  undefined
> = v.looseObject({
  reference: v.string(),
  amount: v.number(),
  currency: v.string(),
  metadata: v.optional(v.unknown()),
});

const DebitEventData: v.LooseObjectSchema<
  {
    readonly payment_reference: v.StringSchema<undefined>;
    readonly mandate_reference: v.StringSchema<undefined>;
    readonly debit_amount: v.NumberSchema<undefined>;
    readonly status: v.StringSchema<undefined>;
  },
  undefined
> = v.looseObject({
  payment_reference: v.string(),
  mandate_reference: v.string(),
  debit_amount: v.number(),
  status: v.string(),
});

const AnyData: v.LooseObjectSchema<Record<never, never>, undefined> = v.looseObject({});

// One event type's envelope: `event_type` (a literal, or any string), the envelope fields, `data`.
type EventSchema<
  Type extends v.GenericSchema<string>,
  Data extends v.GenericSchema,
> = v.LooseObjectSchema<
  { readonly event_type: Type; readonly data: Data } & typeof EnvelopeEntries,
  undefined
>;

/**
 * The webhook envelope of each event type the spec names, told apart by `event_type`
 * (docs/payments-api.md, "Events"): what {@link parseWebhookEvent} checks a known event
 * with. The gateway publishes each variant's `data` as JSON Schema in its event-type
 * catalog, so the shapes are written once, here.
 */
export const KnownEventSchema: v.VariantSchema<
  'event_type',
  [
    EventSchema<v.LiteralSchema<'charge_success', undefined>, typeof MoneyEventData>,
    EventSchema<v.LiteralSchema<'disbursement_success', undefined>, typeof MoneyEventData>,
    EventSchema<v.LiteralSchema<'direct_debit_success', undefined>, typeof DebitEventData>,
    EventSchema<v.LiteralSchema<'direct_debit_failure', undefined>, typeof AnyData>,
    EventSchema<v.LiteralSchema<'mandate_activated', undefined>, typeof AnyData>,
  ],
  undefined
> = v.variant('event_type', [
  v.looseObject({
    event_type: v.literal('charge_success'),
    ...EnvelopeEntries,
    data: MoneyEventData,
  }),
  v.looseObject({
    event_type: v.literal('disbursement_success'),
    ...EnvelopeEntries,
    data: MoneyEventData,
  }),
  v.looseObject({
    event_type: v.literal('direct_debit_success'),
    ...EnvelopeEntries,
    data: DebitEventData,
  }),
  // The spec shows no fields for these two: typed as open objects.
  v.looseObject({
    event_type: v.literal('direct_debit_failure'),
    ...EnvelopeEntries,
    data: AnyData,
  }),
  v.looseObject({ event_type: v.literal('mandate_activated'), ...EnvelopeEntries, data: AnyData }),
]);

const KNOWN_TYPES: ReadonlySet<string> = new Set([
  'charge_success',
  'disbursement_success',
  'direct_debit_success',
  'direct_debit_failure',
  'mandate_activated',
]);

/**
 * The envelope of an event type the spec does not name: any `event_type`, `data` an open
 * object. What {@link parseWebhookEvent} checks such an event with (forward compatible).
 */
export const GenericEventSchema: EventSchema<
  v.StringSchema<undefined>,
  typeof AnyData
> = v.looseObject({
  event_type: v.string(),
  ...EnvelopeEntries,
  data: AnyData,
});

/** A webhook of one of the five event types the spec names, typed by `event_type` (docs/payments-api.md, "Events"). */
export type KnownWebhookEvent = v.InferOutput<typeof KnownEventSchema>;

/** A webhook of a type the spec does not name (forward compatible); `data` is an open object. */
export type GenericWebhookEvent = v.InferOutput<typeof GenericEventSchema> & {
  /** `false`: a type the spec does not name. */
  known: false;
};

/** A webhook event: narrow on `event_type` (docs/payments-api.md, "Events"). */
export type WebhookEvent =
  | (KnownWebhookEvent & {
      /** `true`: one of the event types the spec names. */
      known: true;
    })
  | GenericWebhookEvent;

/** Options of {@link parseWebhookEvent}. */
export interface ParseWebhookOptions {
  /**
   * The API secret the webhook was signed with. Required: a missing (`undefined`, `null`)
   * or empty secret is a `TypeError`, never an event accepted unchecked. To parse without
   * verifying (tests), call {@link parseWebhookEventUnverified}.
   */
  secret: string;
  /** Accepted clock skew of `X-Timestamp`, in seconds, past and future. @default 300 */
  toleranceSec?: number;
  /** Clock in milliseconds since the epoch. @default Date.now */
  now?: () => number;
  /** SubtleCrypto implementation. @default globalThis.crypto.subtle */
  subtle?: typeof crypto.subtle;
}

const decoder = new TextDecoder();

/**
 * Verifies and parses a webhook (docs/payments-api.md, "Events"). The `X-Timestamp` / `X-Signature`
 * headers are checked over the exact raw body in constant time, within `toleranceSec`
 * (300 s) of now, past or future, before anything is parsed. Pass the body exactly as
 * received (`await request.text()` or its bytes), never parsed-and-restringified JSON.
 * It fails closed: without a secret nothing is parsed.
 *
 * @param rawBody - the request body as received: text or bytes.
 * @param headers - the request headers (`Headers` or a plain record).
 * @param options - `secret` (required), `toleranceSec` (seconds), clock, SubtleCrypto.
 * @returns the event, typed by `event_type`; `known` is false for types the spec does not name.
 * @throws {TypeError} naming `secret` when it is missing (`undefined`, `null`, not a
 *   string) or empty, e.g. an unset environment variable; when `rawBody` is a parsed
 *   object instead of text or bytes.
 * @throws {SignatureVerificationError} when the signature is missing, stale or wrong (its
 *   message hints at a re-serialized body when that is the likely cause).
 * @throws {ResponseValidationError} when the body is not the spec's webhook envelope.
 *
 * @example
 * ```ts
 * const event = await parseWebhookEvent(await request.text(), request.headers, { secret });
 * if (event.event_type === 'charge_success') fulfil(event.data.reference);
 * ```
 */
export async function parseWebhookEvent(
  rawBody: RawBody,
  headers: Headers | Record<string, string | undefined>,
  options: ParseWebhookOptions,
): Promise<WebhookEvent> {
  // `options?.`: a JavaScript caller may pass no options at all; that too fails closed.
  const secret = requireSecret(options?.secret);
  const text = rawBodyText(rawBody);
  await verifyWebhookSignature(rawBody, text, headers, secret, options);
  return parseEvent(text);
}

/**
 * Parses a webhook body WITHOUT checking its signature (docs/payments-api.md, "Events"): for tests and
 * fixtures, or a body whose origin was proved by other means. Never use it on a request
 * from the network: anyone can send one; {@link parseWebhookEvent} verifies first.
 *
 * @param rawBody - the body: text or bytes.
 * @returns the event, typed by `event_type`; `known` is false for types the spec does not name.
 * @throws {ResponseValidationError} when the body is not the spec's webhook envelope.
 * @throws {TypeError} when `rawBody` is a parsed object instead of text or bytes.
 *
 * @example
 * ```ts
 * const event = parseWebhookEventUnverified(JSON.stringify(fixture));
 * ```
 */
export function parseWebhookEventUnverified(rawBody: RawBody): WebhookEvent {
  return parseEvent(rawBodyText(rawBody));
}

function rawBodyText(rawBody: RawBody): string {
  if (typeof rawBody === 'string') return rawBody;
  if (rawBody instanceof Uint8Array) return decoder.decode(rawBody);
  throw new TypeError(
    'A webhook is parsed from the raw body as received (request.text() or its bytes), not parsed JSON: ' +
      'the signature covers the exact bytes',
  );
}

function parseEvent(text: string): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ResponseValidationError(
      'Webhook body is not JSON',
      [{ path: '', message: 'Expected JSON' }],
      {
        rawBody: text,
        cause,
      },
    );
  }
  const type = (parsed as { event_type?: unknown } | null)?.event_type;
  if (typeof type === 'string' && KNOWN_TYPES.has(type)) {
    return { ...validate(KnownEventSchema, parsed, text), known: true };
  }
  return { ...validate(GenericEventSchema, parsed, text), known: false };
}

async function verifyWebhookSignature(
  rawBody: RawBody,
  text: string,
  headers: Headers | Record<string, string | undefined>,
  secret: string,
  options: ParseWebhookOptions,
): Promise<void> {
  try {
    await verifyRequestSignature({
      secret,
      body: rawBody,
      headers,
      toleranceSec: options.toleranceSec ?? DEFAULT_TOLERANCE_SEC,
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.subtle === undefined ? {} : { subtle: options.subtle }),
    });
  } catch (error) {
    if (error instanceof SignatureVerificationError && error.reason === 'signature_mismatch') {
      throw new SignatureVerificationError(
        `${error.message}. Check the secret, and pass the raw body exactly as received: a body that ` +
          'was parsed and re-serialized (body-parser middleware, JSON.stringify) no longer verifies',
        error.reason,
        { rawBody: text, cause: error },
      );
    }
    throw error;
  }
}

function validate<T extends v.GenericSchema>(
  schema: T,
  value: unknown,
  rawBody: string,
): v.InferOutput<T> {
  return parseOrThrow(
    schema,
    value,
    ResponseValidationError,
    "Webhook body is not the spec's event envelope",
    { rawBody },
  );
}
