/**
 * `GET /openapi.json`: the document is generated from the route table and the SDK's
 * valibot schemas; these tests hold it to both.
 */
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EmailSchema } from '../../../lib/schemas/common.ts';
import { CreateMandateRequestSchema } from '../../../lib/schemas/direct-debits.ts';
import { InitializeRefundRequestSchema } from '../../../lib/schemas/refunds.ts';
import { openApiPath } from '../../../worker/openapi/document.ts';
import { convertSchemas } from '../../../worker/openapi/schemas.ts';
import { errorStatuses } from '../../../worker/openapi/statuses.ts';
import { createRouter } from '../../../worker/router.ts';
import { DeliveryListQuerySchema } from '../../../worker/routes/admin/deliveries.ts';
import { EventListQuerySchema } from '../../../worker/routes/admin/event-list.ts';
import { OWN_ROUTES, PROXY_ROUTES } from '../../../worker/routes/table.ts';
import {
  captureLogs,
  errorBody,
  fetchGateway,
  gatewayRequest,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';

type Json = Record<string, unknown>;
interface Doc {
  openapi: string;
  info: { title: string; version: string };
  security: Json[];
  paths: Record<string, Record<string, Json>>;
  components: Record<string, Record<string, Json>>;
}

let doc: Doc;

/** Follows a local `$ref` (`#/components/...`) to what it names. */
function resolve(node: unknown): Json {
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref !== 'string') return node as Json;
  let target: unknown = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    target = (target as Json | undefined)?.[part];
  }
  expect(target, ref).toBeDefined();
  return resolve(target);
}

/** The operation of a route (`{ method, pattern }`, from either route table). */
function operationOf(route: { readonly method: string; readonly pattern: string }): Json {
  const operation = doc.paths[openApiPath(route.pattern)]?.[route.method.toLowerCase()];
  expect(operation, `${route.method} ${route.pattern}`).toBeDefined();
  return operation as Json;
}

/** The JSON Schema of an operation's JSON request body, `$ref`s followed. */
function bodySchemaOf(operation: Json): Json {
  const body = operation.requestBody as { content: Record<string, { schema: unknown }> };
  return resolve(body.content['application/json']?.schema);
}

function parametersOf(operation: Json): Json[] {
  return ((operation.parameters ?? []) as unknown[]).map(resolve);
}

/** The entries of a valibot object schema (piped or not) and which of them are required. */
function entriesOf(schema: v.GenericSchema): { keys: string[]; required: string[] } {
  const entries = (schema as unknown as { entries: Record<string, v.GenericSchema> }).entries;
  const keys = Object.keys(entries);
  return { keys, required: keys.filter((key) => entries[key]?.type !== 'optional') };
}

beforeEach(async () => {
  captureLogs();
  const res = await fetchGateway(gatewayRequest('/openapi.json'));
  expect(res.status).toBe(200);
  expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Doc;
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('GET /openapi.json', () => {
  describe('access', () => {
    it('should answer 401 unauthorized without a bearer token', async () => {
      const id = uniqueRequestId();
      const res = await fetchGateway(
        gatewayRequest('/openapi.json', { token: null, requestId: id }),
      );
      expect(res.status).toBe(401);
      expect(await errorBody(res)).toMatchObject({ code: 'unauthorized', request_id: id });
      expect(await sandboxRequests(id)).toEqual([]);
    });

    it('should serve the same document on every call', async () => {
      const again = await fetchGateway(gatewayRequest('/openapi.json'));
      expect(await again.json()).toEqual(doc);
    });
  });

  describe('document', () => {
    it('should declare OpenAPI 3.1 with bearer security', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info.title).toMatch(/\w/);
      expect(doc.info.version).toMatch(/\w/);
      expect(doc.security).toEqual([{ bearerAuth: [] }]);
      expect(doc.components.securitySchemes?.bearerAuth).toMatchObject({
        type: 'http',
        scheme: 'bearer',
      });
    });

    it('should describe every route of both route tables with its method and name', () => {
      for (const route of [...PROXY_ROUTES, ...OWN_ROUTES]) {
        expect(operationOf(route).operationId, route.name).toBe(route.name);
      }
      const described = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
      const expected = [...PROXY_ROUTES, ...OWN_ROUTES].map(
        (r) => `${r.method} ${openApiPath(r.pattern)}`,
      );
      expect(described.sort()).toEqual(expected.sort());
      expect(new Set(expected).size).toBe(expected.length);
      // The literal routes, so the comparison above cannot pass on two empty tables.
      expect(described).toEqual(
        expect.arrayContaining([
          'GET /healthz',
          'GET /openapi.json',
          'POST /webhooks',
          'POST /admin/subscriptions',
          'GET /admin/subscriptions',
          'GET /admin/subscriptions/{id}',
          'PATCH /admin/subscriptions/{id}',
          'DELETE /admin/subscriptions/{id}',
          'POST /admin/subscriptions/{id}/rotate-secret',
          'GET /admin/events',
          'GET /admin/events/{id}',
          'POST /admin/events/{id}/replay',
          'GET /admin/deliveries',
          'GET /admin/deliveries/counts',
          'GET /admin/deliveries/hourly',
          'POST /admin/deliveries/{id}/retry',
          'POST /payments/initialize',
        ]),
      );
    });

    it('should describe exactly the routes the router serves', () => {
      const served = createRouter()
        .routes.filter(([method]) => method !== 'ALL')
        .map(([method, , , path]) => `${method} ${openApiPath(path ?? '')}`);
      const described = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
      expect(served.length).toBe(PROXY_ROUTES.length + OWN_ROUTES.length);
      expect(described.sort()).toEqual(served.sort());
    });

    it('should template path parameters and declare each as required', () => {
      for (const route of [...PROXY_ROUTES, ...OWN_ROUTES]) {
        const path = openApiPath(route.pattern);
        expect(path).not.toContain(':');
        const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
        const declared = parametersOf(operationOf(route)).filter((p) => p.in === 'path');
        expect(
          declared.map((p) => p.name),
          route.name,
        ).toEqual(names);
        expect(
          declared.every((p) => p.required === true),
          route.name,
        ).toBe(true);
      }
    });

    it('should require Idempotency-Key on the money POSTs and offer it on other writes', () => {
      const money: string[] = [];
      for (const route of PROXY_ROUTES) {
        const key = parametersOf(operationOf(route)).find((p) => p.name === 'Idempotency-Key');
        if (route.idempotency === 'none') expect(key, route.name).toBeUndefined();
        else
          expect(key, route.name).toMatchObject({
            in: 'header',
            required: route.idempotency === 'required',
          });
        if (key?.required === true) money.push(`${route.method} ${route.pattern}`);
      }
      expect(money.sort()).toEqual(
        [
          'POST /payments/initialize',
          'POST /disbursements/initialize',
          'POST /refunds/initialize',
          'POST /direct-debits/mandates',
          'POST /direct-debits/debit',
          'POST /direct-debits/disburse',
          'POST /virtual-accounts',
        ].sort(),
      );
    });

    it('should publish the body schema of every route that takes one', () => {
      for (const route of PROXY_ROUTES.filter((r) => r.body !== undefined)) {
        const body = operationOf(route).requestBody as Json;
        expect(body.required, route.name).toBe(true);
        const content = body.content as Record<string, { schema: unknown }>;
        const schema = resolve(content['application/json']?.schema);
        const { keys, required } = entriesOf(route.body?.schema as v.GenericSchema);
        expect(schema.type, route.name).toBe('object');
        expect(Object.keys(schema.properties as Json), route.name).toEqual(keys);
        expect(schema.required, route.name).toEqual(required);
      }
    });

    it('should describe the body-less writes as no body or an empty object', () => {
      for (const route of PROXY_ROUTES.filter((r) => r.method !== 'GET' && !r.body)) {
        expect(operationOf(route).requestBody, route.name).toMatchObject({
          required: false,
          content: { 'application/json': { schema: { type: 'object', maxProperties: 0 } } },
        });
      }
      for (const route of PROXY_ROUTES.filter((r) => r.method === 'GET')) {
        expect(operationOf(route).requestBody, route.name).toBeUndefined();
      }
    });

    it('should publish query parameters from the query schema', () => {
      for (const route of PROXY_ROUTES.filter((r) => r.query !== undefined)) {
        const query = parametersOf(operationOf(route)).filter((p) => p.in === 'query');
        const { keys, required } = entriesOf(route.query as v.GenericSchema);
        expect(
          query.map((p) => p.name),
          route.name,
        ).toEqual(keys);
        expect(
          query.filter((p) => p.required).map((p) => p.name),
          route.name,
        ).toEqual(required);
      }
      const list = PROXY_ROUTES.find((r) => r.name === 'payments.list');
      const pageSize = parametersOf(operationOf(list as (typeof PROXY_ROUTES)[number])).find(
        (p) => p.name === 'page_size',
      );
      expect(pageSize?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
    });

    it('should describe amounts as a decimal string or a number', () => {
      const amount = doc.components.schemas?.Amount as { oneOf: Json[] };
      expect(amount.oneOf.map((branch) => branch.type)).toEqual(['string', 'number']);
      const pattern = new RegExp(amount.oneOf[0]?.pattern as string);
      expect(['5000.50', '1', '0.5'].every((text) => pattern.test(text))).toBe(true);
      expect(['1.234', '-1', '1e3', ''].some((text) => pattern.test(text))).toBe(false);
    });

    it('should give every operation the error responses of the gateway', () => {
      const errorSchema = resolve({ $ref: '#/components/schemas/ErrorBody' });
      expect(errorSchema.required).toEqual(['status', 'message', 'code', 'request_id']);
      const always = ['400', '401', '403', '404', '405', '409', '422', '429', '502', '504'];
      for (const route of PROXY_ROUTES) {
        const responses = operationOf(route).responses as Json;
        const expected = route.method === 'GET' ? always : [...always, '413', '415'];
        for (const status of expected) {
          const response = resolve(responses[status]);
          const content = response.content as Record<string, { schema: unknown }>;
          expect(resolve(content['application/json']?.schema), `${route.name} ${status}`).toBe(
            errorSchema,
          );
        }
        if (route.method === 'GET') expect(responses['415'], route.name).toBeUndefined();
      }
    });

    it('should describe /healthz as open, and deep=1 with the admin token', () => {
      const health = doc.paths['/healthz']?.get as Json;
      expect(health.security).toEqual([{}, { adminToken: [] }]);
      expect(health.description).toMatch(/deep=1/);
      expect(parametersOf(health).filter((p) => p.in === 'query')).toEqual([
        {
          name: 'deep',
          in: 'query',
          required: false,
          schema: expect.objectContaining({ enum: ['0', '1'] }),
        },
      ]);
      const responses = health.responses as Json;
      expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '429', '500', '503']);
      expect(responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
      expect(responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });
      const schemaOf = (status: string) =>
        resolve(
          (responses[status] as { content: Record<string, { schema: unknown }> }).content[
            'application/json'
          ]?.schema,
        );
      expect(schemaOf('503')).toBe(schemaOf('200'));
      const checks = (schemaOf('200').properties as Record<string, Json>).checks as Json;
      expect(Object.keys(checks.properties as Json)).toEqual(['d1', 'kv', 'queue', 'upstream']);
    });

    it('should resolve every $ref in the document', () => {
      const refs: string[] = [];
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (typeof node === 'object' && node !== null) {
          for (const [key, value] of Object.entries(node)) {
            if (key === '$ref' && typeof value === 'string') refs.push(value);
            else walk(value);
          }
        }
      };
      walk(doc);
      expect(refs.length).toBeGreaterThan(50);
      for (const ref of new Set(refs)) expect(resolve({ $ref: ref }), ref).toBeTypeOf('object');
    });
  });

  describe('gateway routes', () => {
    const SECURITY = {
      none: [],
      'none-or-admin': [{}, { adminToken: [] }],
      bearer: undefined,
      admin: [{ adminToken: [] }],
      'webhook-signature': [{ webhookSignature: [] }],
    } as const;

    it('should give each gateway route the security scheme of its auth', () => {
      for (const route of OWN_ROUTES) {
        expect(operationOf(route).security, route.name).toEqual(SECURITY[route.auth]);
        // The admin routes are exactly those under /admin/; the scheme must say the same.
        expect(route.pattern.startsWith('/admin/'), route.name).toBe(route.auth === 'admin');
      }
      const open = OWN_ROUTES.filter((r) => !['bearer', 'admin'].includes(r.auth));
      expect(open.map((r) => r.pattern).sort()).toEqual(['/healthz', '/webhooks']);
      for (const route of PROXY_ROUTES) expect(route.auth, route.name).toBe('bearer');
    });

    it('should declare the admin token and the webhook HMAC headers as security schemes', () => {
      const schemes = doc.components.securitySchemes as Record<string, Json>;
      expect(schemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(schemes.adminToken?.description).toMatch(/ADMIN_TOKEN/);
      expect(schemes.webhookSignature).toMatchObject({
        type: 'apiKey',
        in: 'header',
        name: 'X-Signature',
      });
      const description = schemes.webhookSignature?.description as string;
      for (const part of ['X-Key-Id', 'X-Timestamp', 'X-Signature', '300 s', 'WEBHOOK_SECRET']) {
        expect(description).toContain(part);
      }
    });

    it('should describe POST /webhooks as signed, not bearer, with the envelope as its body', () => {
      const ingest = doc.paths['/webhooks']?.post as Json;
      expect(ingest.security).toEqual([{ webhookSignature: [] }]);
      expect(JSON.stringify(ingest.security)).not.toContain('bearerAuth');
      expect((ingest.requestBody as Json).required).toBe(true);
      const body = bodySchemaOf(ingest);
      expect(body.required).toEqual(['event_type', 'event_id', 'timestamp', 'data']);
      expect((body.properties as Record<string, Json>).data).toEqual({
        type: 'object',
        additionalProperties: true,
      });
      expect(body.additionalProperties).toBeUndefined();
      const responses = ingest.responses as Json;
      expect(responses['401']).toEqual({ $ref: '#/components/responses/InvalidSignature' });
      expect(resolve(responses['503']).description).toMatch(/upstream_unreachable/);
      const ack = resolve(
        (responses['200'] as { content: Record<string, { schema: unknown }> }).content[
          'application/json'
        ]?.schema,
      );
      expect(ack.required).toEqual(['status', 'event_id', 'duplicate']);
    });

    it('should describe POST /admin/subscriptions with the admin token and a strict body', () => {
      const create = doc.paths['/admin/subscriptions']?.post as Json;
      expect(create.security).toEqual([{ adminToken: [] }]);
      expect(create.tags).toEqual(['admin']);
      expect((create.requestBody as Json).required).toBe(true);
      const body = bodySchemaOf(create);
      expect(body.required).toEqual(['url']);
      expect(Object.keys(body.properties as Json)).toEqual([
        'url',
        'event_types',
        'description',
        'enabled',
        'max_per_second',
        'max_in_flight',
        'ordered',
        'allow_custom_event_types',
      ]);
      expect(body.additionalProperties).toBe(false);
      // The catalog rule on event_types is said in words.
      expect(body.description).toContain('allow_custom_event_types');
      const url = (body.properties as Record<string, Json>).url as Json;
      expect(url).toMatchObject({ type: 'string', maxLength: 2048 });
      expect(url.description).toMatch(/https/);
      expect(Object.keys(create.responses as Json)).toContain('201');
      expect((create.responses as Json)['401']).toEqual({
        $ref: '#/components/responses/Unauthorized',
      });
    });

    it('should require at least one field on PATCH /admin/subscriptions/{id}', () => {
      const update = doc.paths['/admin/subscriptions/{id}']?.patch as Json;
      const body = bodySchemaOf(update);
      expect(body.required).toEqual([]);
      expect(body.minProperties).toBe(1);
      expect(body.additionalProperties).toBe(false);
    });

    it('should publish the query parameters of GET /admin/events', () => {
      const list = doc.paths['/admin/events']?.get as Json;
      const query = parametersOf(list).filter((p) => p.in === 'query');
      expect(query.map((p) => p.name)).toEqual([
        'event_type',
        'status',
        'outcome',
        'reference',
        'reference_prefix',
        'event_id_prefix',
        'from',
        'to',
        'page_size',
        'cursor',
      ]);
      expect(query.map((p) => p.name)).toEqual(entriesOf(EventListQuerySchema).keys);
      expect(query.find((p) => p.name === 'outcome')?.schema).toMatchObject({
        enum: ['failed', 'failing', 'pending', 'held', 'delivered', 'no_subscriber'],
      });
      expect(query.find((p) => p.name === 'event_id_prefix')?.schema).toMatchObject({
        pattern: '^[\\x21-\\x7e]{1,255}$',
      });
      expect(query.every((p) => p.required === false)).toBe(true);
      expect(query.find((p) => p.name === 'status')?.schema).toMatchObject({
        enum: ['received', 'awaiting_confirmation', 'confirmed', 'unconfirmed'],
      });
      expect(query.find((p) => p.name === 'from')?.schema).toMatchObject({ format: 'date-time' });
      expect(list.description).toBe('Rule: Expected `to` to be later than `from`.');
      expect(list.requestBody).toBeUndefined();
    });

    it('should publish the query parameters of GET /admin/deliveries and its hourly counts', () => {
      const list = doc.paths['/admin/deliveries']?.get as Json;
      const query = parametersOf(list).filter((p) => p.in === 'query');
      expect(query.map((p) => p.name)).toEqual([
        'status',
        'subscription_id',
        'event_id',
        'page_size',
        'cursor',
      ]);
      expect(query.map((p) => p.name)).toEqual(entriesOf(DeliveryListQuerySchema).keys);
      expect(query.every((p) => p.required === false)).toBe(true);
      expect(query.find((p) => p.name === 'status')?.schema).toMatchObject({
        enum: ['pending', 'delivered', 'failed'],
      });
      expect(query.find((p) => p.name === 'page_size')?.schema).toMatchObject({
        description: expect.stringMatching(/Default 50/),
      });
      const hourly = doc.paths['/admin/deliveries/hourly']?.get as Json;
      expect(hourly.security).toEqual([{ adminToken: [] }]);
      expect(parametersOf(hourly).filter((p) => p.in === 'query')).toEqual([
        {
          name: 'hours',
          in: 'query',
          required: false,
          schema: expect.objectContaining({ description: expect.stringMatching(/1 to 168/) }),
        },
      ]);
      expect(Object.keys(hourly.responses as Json).sort()).toEqual(
        ['200', '400', '401', '429', '500'].sort(),
      );
    });

    it('should publish the body and query schemas of every gateway route that has one', () => {
      for (const route of OWN_ROUTES) {
        const operation = operationOf(route);
        if (route.body === undefined) {
          expect(operation.requestBody, route.name).toBeUndefined();
        } else {
          expect((operation.requestBody as Json).required, route.name).toBe(route.body.required);
          const { keys, required } = entriesOf(route.body.schema);
          const schema = bodySchemaOf(operation);
          expect(Object.keys(schema.properties as Json), route.name).toEqual(keys);
          expect(schema.required, route.name).toEqual(required);
        }
        const query = parametersOf(operation).filter((p) => p.in === 'query');
        const keys = route.query === undefined ? [] : entriesOf(route.query).keys;
        expect(
          query.map((p) => p.name),
          route.name,
        ).toEqual(keys);
      }
    });

    it('should answer each gateway route with its success status and its error responses', () => {
      const errorSchema = resolve({ $ref: '#/components/schemas/ErrorBody' });
      for (const route of OWN_ROUTES) {
        const responses = operationOf(route).responses as Json;
        const statuses = errorStatuses(route).map(String);
        // A failure answered with the route's own body (the deep health check's 503).
        const own =
          route.failureResponse === undefined ? [] : [String(route.failureResponse.status)];
        expect(Object.keys(responses).sort(), route.name).toEqual(
          [String(route.status), ...statuses, ...own].sort(),
        );
        for (const status of statuses) {
          const content = resolve(responses[status]).content as Record<string, { schema: unknown }>;
          expect(resolve(content['application/json']?.schema), `${route.name} ${status}`).toBe(
            errorSchema,
          );
        }
      }
      const remove = doc.paths['/admin/subscriptions/{id}']?.delete as Json;
      expect((remove.responses as Json)['204']).not.toHaveProperty('content');
      expect(Object.keys(remove.responses as Json).sort()).toEqual([
        '204',
        '401',
        '404',
        '429',
        '500',
      ]);
      const replay = doc.paths['/admin/events/{id}/replay']?.post as Json;
      expect((replay.requestBody as Json).required).toBe(false);
      expect(Object.keys(replay.responses as Json)).toContain('202');
    });
  });

  describe('convertSchemas', () => {
    it('should write cross-field rules into the object description and emails as a format', () => {
      const converted = convertSchemas({
        Refund: InitializeRefundRequestSchema,
        Mandate: CreateMandateRequestSchema,
        Email: EmailSchema,
      }) as Record<string, Json>;
      expect(converted.Refund?.description).toBe('Rule: Required when account_number is given.');
      expect(converted.Mandate?.description).toMatch(
        /^Rule: Expected at least 30 days after start_date\.$/,
      );
      expect(converted.Email).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
      expect(converted.Email?.pattern).toBeUndefined();
    });

    it('should refuse a check it has no meaning for rather than widen the contract', () => {
      const schema = v.pipe(
        v.string(),
        v.check((text) => text.length % 2 === 0),
      );
      expect(() => convertSchemas({ Even: schema })).toThrow(/check/);
    });
  });
});
