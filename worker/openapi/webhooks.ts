// The OpenAPI 3.1 `webhooks` section: what the relay sends to subscribers, one entry per type
// of the event-type catalog (worker/relay/event-catalog.ts), each the webhook envelope with
// that type's `data` schema and the Standard Webhooks headers. Nothing here lists a type.
import type { JsonSchema } from '@valibot/to-json-schema';
import { dataJsonSchema, EVENT_TYPE_CATALOG, type EventTypeEntry } from '../relay/event-catalog.ts';
import type { OpenApiObject } from './components.ts';

/** The parts of the document the `webhooks` section adds. */
interface WebhookSection {
  /** The document's `webhooks`: one `post` per event type. */
  readonly webhooks: Record<string, OpenApiObject>;
  /** Schemas to add to `components.schemas`: `WebhookEvent.<type>` per type. */
  readonly schemas: Record<string, JsonSchema>;
  /** Parameters to add to `components.parameters`: the three Standard Webhooks headers. */
  readonly parameters: Record<string, OpenApiObject>;
}

/** The Standard Webhooks headers every delivery carries, as header parameters. */
const HEADER_PARAMETERS: Readonly<Record<string, OpenApiObject>> = {
  WebhookId: {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id: the same on every attempt, so the subscriber can drop repeats.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds of this attempt; signed, so a subscriber can refuse stale ones.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  WebhookSignature: {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`, ' +
      'one per secret in use (the current one, and a replaced one during its 24 h grace), keyed ' +
      'with the subscription’s `whsec_` secret: any Standard Webhooks library verifies it.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$' },
  },
};

/** Who receives an event of the entry's type. */
function audience(entry: EventTypeEntry): string {
  return entry.origin === 'relay'
    ? `Sent to the enabled subscriptions whose \`event_types\` lists \`${entry.type}\` ` +
        '(a subscription to every type does not get the relay’s own events), never to the ' +
        'subscription the event is about.'
    : `Sent to the enabled subscriptions whose \`event_types\` lists \`${entry.type}\` or is ` +
        'null (every type), with the body exactly as the payment service sent it' +
        (entry.origin === 'sandbox'
          ? ' (its sandbox sends this type; the specification does not name it).'
          : '.');
}

const RESPONSES: OpenApiObject = {
  '200': { description: 'Any 2xx: delivered.' },
  '410': {
    description:
      'Gone: the delivery fails and the subscription is disabled (an operator re-enables it).',
  },
  default: {
    description:
      'Any other status, a redirect, a timeout or a network error: retried after 5 s, 5 min, ' +
      '30 min, 2 h, 5 h, 10 h and 10 h (with jitter; a Retry-After is honoured), then dead-lettered.',
  },
};

/**
 * The `webhooks` section of the gateway's document and the components it refers to.
 *
 * @param envelopeRef - `$ref` of the webhook envelope's schema (the ingress's body), which each
 *   event's schema extends with its `event_type` and `data`.
 * @returns the section, its schemas and its header parameters.
 * @throws {Error} when a catalog type's data schema cannot be converted.
 */
export function webhookSection(envelopeRef: string): WebhookSection {
  const webhooks: Record<string, OpenApiObject> = {};
  const schemas: Record<string, JsonSchema> = {};
  for (const entry of EVENT_TYPE_CATALOG) {
    const schemaName = `WebhookEvent.${entry.type}`;
    schemas[schemaName] = {
      description: `The body of a \`${entry.type}\` delivery.`,
      allOf: [
        { $ref: envelopeRef },
        {
          type: 'object',
          properties: { event_type: { const: entry.type }, data: dataJsonSchema(entry.data) },
        },
      ],
    };
    webhooks[entry.type] = {
      post: {
        operationId: `webhooks.${entry.type}`,
        tags: ['deliveries'],
        summary: entry.description,
        description: entry.audience ?? audience(entry),
        security: [],
        parameters: Object.keys(HEADER_PARAMETERS).map((name) => ({
          $ref: `#/components/parameters/${name}`,
        })),
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { $ref: `#/components/schemas/${schemaName}` } },
          },
        },
        responses: RESPONSES,
      },
    };
  }
  return { webhooks, schemas, parameters: { ...HEADER_PARAMETERS } };
}
