/**
 * The `webhooks` section of the gateway's OpenAPI document: one entry per type of the
 * event-type catalog, each signed with the Standard Webhooks headers and carrying the
 * envelope with that type's data schema, which delivered bodies validate against (Ajv,
 * JSON Schema 2020-12, under Node).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPE_CATALOG } from '../../worker/relay/event-catalog.ts';
import { buildGatewayDocument } from '../support/openapi-responses.ts';

type Json = Record<string, unknown>;

/** The parts of a webhook's operation these tests read. */
interface WebhookOperation {
  readonly summary: string;
  readonly description: string;
  readonly parameters: readonly { readonly $ref: string }[];
  readonly requestBody: { readonly content: Record<string, { readonly schema: { $ref: string } }> };
  readonly responses: Json;
}

/** The parts of the document these tests read. */
interface Document {
  readonly openapi: string;
  readonly webhooks: Record<string, { readonly post: WebhookOperation }>;
  readonly components: {
    readonly schemas: Json;
    readonly parameters: Record<string, { name: string; in: string; required: boolean }>;
  };
}

// ajv-formats is CommonJS: its default export arrives wrapped under Node's ESM loader.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

const DOCUMENT_ID = 'https://edgepay.invalid/openapi.json';

let doc: Document;
let ajv: Ajv2020;

beforeAll(async () => {
  doc = (await buildGatewayDocument()) as unknown as Document;
  ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  const schemas = JSON.parse(
    JSON.stringify(doc.components.schemas).replaceAll(
      '"#/components/schemas/',
      `"${DOCUMENT_ID}#/$defs/`,
    ),
  );
  ajv.addSchema({ $id: DOCUMENT_ID, $defs: schemas });
});

/** The operation of the webhook `type`. */
function post(type: string): WebhookOperation {
  const webhook = doc.webhooks[type];
  if (webhook === undefined) throw new Error(`no webhook ${type}`);
  return webhook.post;
}

/** Whether `body` is a valid delivery of `type` by the document. */
function valid(type: string, body: unknown): boolean {
  const ref = post(type).requestBody.content['application/json']?.schema.$ref ?? '';
  const validate = ajv.getSchema(ref.replace('#/components/schemas/', `${DOCUMENT_ID}#/$defs/`));
  if (validate === undefined) throw new Error(`no schema at ${ref}`);
  return validate(body) as boolean;
}

const envelope = (type: string, data: Json) => ({
  event_type: type,
  event_id: 'evt_1',
  timestamp: '2026-11-27T08:00:00.000Z',
  data,
});

describe('the gateway OpenAPI document', () => {
  describe('webhooks', () => {
    it('should describe one delivery per event type of the catalog', () => {
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.webhooks)).toEqual(EVENT_TYPE_CATALOG.map((entry) => entry.type));
      for (const entry of EVENT_TYPE_CATALOG) {
        const operation = post(entry.type);
        expect(operation.summary).toBe(entry.description);
        expect(Object.keys(operation.responses)).toEqual(['200', '410', 'default']);
      }
    });

    it('should sign each with the three Standard Webhooks headers, required', () => {
      for (const { type } of EVENT_TYPE_CATALOG) {
        const names = post(type).parameters.map((p) => {
          const parameter = doc.components.parameters[p.$ref.split('/').at(-1) ?? ''];
          expect(parameter).toMatchObject({ in: 'header', required: true });
          return parameter?.name;
        });
        expect(names).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      }
    });

    it('should say who gets the relay’s own events', () => {
      expect(post('relay.backlog').description).toContain(
        'a subscription to every type does not get',
      );
      expect(post('charge_success').description).toContain('or is null');
    });

    it('should validate a delivered body against its type’s envelope and data', () => {
      const charge = { reference: 'pay_1', amount: 2500, currency: 'NGN', metadata: { a: 1 } };
      expect(valid('charge_success', envelope('charge_success', charge))).toBe(true);
      expect(
        valid('charge_success', envelope('charge_success', { ...charge, amount: '2500' })),
      ).toBe(false);
      expect(valid('charge_success', envelope('disbursement_success', charge))).toBe(false);
      // The envelope's own rules come with it: an event id with a space is refused.
      expect(
        valid('charge_success', { ...envelope('charge_success', charge), event_id: 'a b' }),
      ).toBe(false);
      const deadLettered = {
        delivery_id: 'dlv_1',
        event_id: 'evt_1',
        event_type: 'charge_success',
        subscription_id: 'sub_1',
        attempts: 8,
        last_status: null,
        dead_lettered_at: '2026-11-27T08:00:00.000Z',
      };
      const type = 'delivery.dead_lettered';
      expect(valid(type, envelope(type, deadLettered))).toBe(true);
      const { delivery_id: _missing, ...incomplete } = deadLettered;
      expect(valid(type, envelope(type, incomplete))).toBe(false);
    });
  });
});
