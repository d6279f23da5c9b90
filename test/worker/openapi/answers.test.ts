/**
 * `GET /openapi.json`'s answers: every operation documents its success body (the proxied
 * routes the payment service's answer around the SDK's own records, the admin API its
 * views), the headers each answer carries, and the document-level facts generators need
 * (servers, license, open metadata).
 */
import type * as v from 'valibot';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { PaymentSchema, TransferSchema } from '../../../lib/shared.ts';
import { openApiPath } from '../../../worker/openapi/document.ts';
import { OWN_ROUTES, PROXY_ROUTES } from '../../../worker/routes/table.ts';
import { captureLogs, fetchGateway, gatewayRequest } from '../helpers.ts';

type Json = Record<string, unknown>;
interface Doc {
  info: Json;
  servers: Json[];
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; headers: Record<string, Json> };
}

let doc: Doc;

beforeAll(async () => {
  // The access log line stays out of the test output.
  captureLogs();
  const res = await fetchGateway(gatewayRequest('/openapi.json'));
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
  vi.restoreAllMocks();
});

/** The success response of a route's operation. */
function successOf(route: { method: string; pattern: string; status: number }): Json {
  const operation = doc.paths[openApiPath(route.pattern)]?.[route.method.toLowerCase()];
  const responses = operation?.responses as Record<string, Json>;
  return responses[String(route.status)] as Json;
}

/** The component a success response's body names. */
function bodyComponentOf(success: Json): string {
  const content = success.content as Record<string, { schema: { $ref: string } }>;
  return content['application/json']?.schema.$ref.replace('#/components/schemas/', '') ?? '';
}

/** Every component name a schema refers to, directly or through other components. */
function referencedRecords(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const [, ref] of JSON.stringify(doc.components.schemas[name]).matchAll(
    /"#\/components\/schemas\/(\w+)"/g,
  )) {
    if (ref !== undefined) referencedRecords(ref, seen);
  }
  return seen;
}

const entriesOf = (schema: v.GenericSchema) =>
  Object.keys((schema as unknown as { entries: Record<string, unknown> }).entries);

describe('GET /openapi.json answers', () => {
  it('should give every proxied route the record of its endpoint', () => {
    const records = Object.fromEntries(
      PROXY_ROUTES.map((route) => {
        const own = [...referencedRecords(bodyComponentOf(successOf(route)))].slice(1);
        return [route.name, own.filter((name) => !name.endsWith('Response')).sort()];
      }),
    );
    expect(records).toMatchObject({
      'payments.initialize': ['PaymentSession'],
      'payments.verify': ['Payment'],
      'payments.list': ['Payment'],
      'transfers.initialize': ['PartialTransfer'],
      'transfers.verify': ['Transfer'],
      'refunds.initialize': ['PartialRefund'],
      'refunds.countByStatus': ['RefundCounts'],
      'refunds.listForPayment': ['Refund'],
      'banks.list': ['Bank'],
      'banks.resolve': ['ResolvedAccount'],
      'directDebits.mandates.initiateActivation': ['ActivationChallenge'],
      'directDebits.mandates.cancel': ['MandateState'],
      'directDebits.disburse': ['Transfer'],
      'virtualAccounts.create': ['PartialVirtualAccount'],
      'virtualAccounts.listTransactions': ['VirtualAccountTransaction'],
    });
    for (const [name, found] of Object.entries(records)) expect(found, name).toHaveLength(1);
  });

  it("should publish the SDK's response records with their fields", () => {
    const { schemas } = doc.components;
    expect(Object.keys(schemas.Payment?.properties as Json).sort()).toEqual(
      entriesOf(PaymentSchema).sort(),
    );
    // The transfer's fields after its state is renamed, plus the name the service uses.
    const fields = entriesOf(TransferSchema.pipe[2]);
    expect(Object.keys(schemas.Transfer?.properties as Json).sort()).toEqual(
      [...fields, 'transfer_status'].sort(),
    );
    expect(schemas.Transfer?.required).toEqual(['reference']);
    expect(schemas.Transfer?.anyOf).toEqual([
      { required: ['status'], properties: { status: { type: 'string' } } },
      { required: ['transfer_status'], properties: { transfer_status: { type: 'string' } } },
    ]);
    expect(schemas.PartialTransfer?.required).toBeUndefined();
  });

  it('should describe a page in each variant the SDK reads', () => {
    const list = doc.components.schemas.PaymentsListResponse as { anyOf: Json[] };
    expect(list.anyOf).toHaveLength(2);
    const [top, enveloped] = list.anyOf as [Json, { properties: { data: Json } }];
    for (const page of [top, enveloped.properties.data]) {
      expect(page.required).toEqual(['total']);
      expect((page.anyOf as Json[]).map((variant) => variant.required)).toEqual([
        ['data'],
        ['records'],
        ['items'],
      ]);
    }
  });

  it('should give every admin route with a body its own schema, never an open data', () => {
    for (const route of OWN_ROUTES.filter((r) => r.auth === 'admin' && r.status !== 204)) {
      const schema = doc.components.schemas[bodyComponentOf(successOf(route))] as {
        properties: { data: Json };
      };
      expect(schema.properties.data, route.name).not.toEqual({});
      expect(Object.keys(schema.properties.data), route.name).not.toHaveLength(0);
    }
  });

  it('should require X-Request-Id on every answer, X-Cache on the cached routes', () => {
    expect(doc.components.headers.RequestId?.required).toBe(true);
    for (const route of PROXY_ROUTES) {
      const headers = successOf(route).headers as Json;
      expect(Object.keys(headers).includes('X-Cache'), route.name).toBe(route.cache !== undefined);
    }
  });

  it('should declare servers, the license and an open Metadata', () => {
    expect(doc.servers.map((server) => server.url)).toEqual([
      'http://127.0.0.1:8787',
      'https://edgepay-gateway.{subdomain}.workers.dev',
    ]);
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(doc.components.schemas.Metadata).toMatchObject({
      type: 'object',
      additionalProperties: true,
    });
  });
});
