import * as v from 'valibot';

/** Longest `event_id` and `event_type` accepted, in characters (bounds the D1 key). */
export const MAX_EVENT_KEY_LENGTH = 255;

const key = v.pipe(
  v.string(),
  v.nonEmpty('Expected a non-empty string'),
  v.maxLength(MAX_EVENT_KEY_LENGTH, `Expected at most ${MAX_EVENT_KEY_LENGTH} characters`),
);

/**
 * An `event_id`: 1 to {@link MAX_EVENT_KEY_LENGTH} visible ASCII characters (no space, no
 * control character). It becomes the `webhook-id` header of every delivery and a path
 * segment of the admin API, where a newline or a space would break the one or the other.
 */
const eventId = v.pipe(
  v.string(),
  v.regex(
    /^[\x21-\x7e]{1,255}$/,
    `Expected 1 to ${MAX_EVENT_KEY_LENGTH} visible ASCII characters (no spaces or control characters)`,
  ),
);

/**
 * A JSON object (not an array, not `null`): the envelope's `data` (docs/payments-api.md, "Events"). A
 * `custom` schema because valibot's object schemas accept arrays (and copy them into
 * objects); the OpenAPI converter describes it through an override (worker/openapi/schemas.ts).
 */
export const JsonObjectSchema = v.custom<Record<string, unknown>>(
  (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
  'Invalid type: Expected a JSON object',
);

/**
 * The webhook envelope of the spec (docs/payments-api.md, "Events"), as the ingress checks it: `event_type`
 * and `timestamp` required strings, `event_id` visible ASCII, `status` and `message` optional strings,
 * `data` an object. Unknown fields and unknown event types pass (forward compatible);
 * the typed per-event check is the SDK's `parseWebhookEvent`.
 */
export const WebhookEnvelopeSchema = v.looseObject({
  event_type: key,
  event_id: eventId,
  timestamp: v.pipe(v.string(), v.nonEmpty('Expected a non-empty string')),
  status: v.optional(v.string()),
  message: v.optional(v.string()),
  data: JsonObjectSchema,
});

/** A validated webhook envelope (docs/payments-api.md, "Events"). */
export type WebhookEnvelope = v.InferOutput<typeof WebhookEnvelopeSchema>;

/**
 * The payment reference an event is about: its `data.reference` when that is a string,
 * else `null` (an event without one, or with a number or an object there). Stored on the
 * event so the admin API finds an event by exact reference.
 *
 * @param envelope - a validated envelope (only its `data` is read).
 * @returns the reference, unchanged (no trimming or case folding), or `null`.
 */
export function referenceOf(envelope: Pick<WebhookEnvelope, 'data'>): string | null {
  const reference = envelope.data.reference;
  return typeof reference === 'string' ? reference : null;
}
