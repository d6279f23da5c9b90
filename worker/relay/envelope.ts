import * as v from 'valibot';

/** Longest `event_id` and `event_type` accepted, in characters (bounds the D1 key). */
export const MAX_EVENT_KEY_LENGTH = 255;

const key = v.pipe(
  v.string(),
  v.nonEmpty('Expected a non-empty string'),
  v.maxLength(MAX_EVENT_KEY_LENGTH, `Expected at most ${MAX_EVENT_KEY_LENGTH} characters`),
);

/**
 * A JSON object (not an array, not `null`): the envelope's `data` (spec: Events). A
 * `custom` schema because valibot's object schemas accept arrays (and copy them into
 * objects); the OpenAPI converter describes it through an override (worker/openapi/schemas.ts).
 */
export const JsonObjectSchema = v.custom<Record<string, unknown>>(
  (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
  'Invalid type: Expected a JSON object',
);

/**
 * The webhook envelope of the spec (spec: Events), as the ingress checks it: `event_type`,
 * `event_id` and `timestamp` required strings, `status` and `message` optional strings,
 * `data` an object. Unknown fields and unknown event types pass (forward compatible);
 * the typed per-event check is the SDK's `parseWebhookEvent`.
 */
export const WebhookEnvelopeSchema = v.looseObject({
  event_type: key,
  event_id: key,
  timestamp: v.pipe(v.string(), v.nonEmpty('Expected a non-empty string')),
  status: v.optional(v.string()),
  message: v.optional(v.string()),
  data: JsonObjectSchema,
});

/** A validated webhook envelope (spec: Events). */
export type WebhookEnvelope = v.InferOutput<typeof WebhookEnvelopeSchema>;
