// The gateway's OpenAPI 3.1 document, generated from the route table and the SDK's valibot
// schemas (issue 4 point 8): nothing here lists an endpoint or a field by hand.
import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { HEALTH_PATH } from '../routes/health.ts';
import { UPSTREAM_ROUTES, type UpstreamRoute } from '../upstream/routes.ts';
import {
  BODY_ONLY_STATUSES,
  ERROR_RESPONSES,
  ErrorBodySchema,
  errorResponseComponents,
  HEADERS,
  IdempotencyKeySchema,
  type OpenApiObject,
  SuccessEnvelopeSchema,
} from './components.ts';
import { convertSchemas, SCHEMA_REF_PREFIX } from './schemas.ts';

/** The OpenAPI version the document follows. */
export const OPENAPI_VERSION = '3.1.0';

/** Path of the document itself (bearer auth, like every route but the health check). */
export const OPENAPI_PATH = '/openapi.json';

/**
 * An OpenAPI path template from an itty-router pattern (`/payments/verify/:reference`
 * becomes `/payments/verify/{reference}`).
 *
 * @param pattern - the route pattern.
 * @returns the templated path.
 */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:(\w+)/g, '{$1}');
}

/**
 * Builds the document (DESIGN 4.1 routes, DESIGN 4.4 bodies, DESIGN 4.5 statuses): one
 * operation per route with its path and query parameters, the `Idempotency-Key` header
 * (required on `idempotency: 'required'` routes, optional on `optional` ones), the
 * request body schema, the bearer security scheme, and `/healthz`.
 *
 * @param routes - the route table. @default UPSTREAM_ROUTES
 * @returns the OpenAPI 3.1 document as JSON-ready data.
 * @throws {Error} when a schema uses a valibot feature the converter cannot describe.
 */
export function buildOpenApiDocument(
  routes: readonly UpstreamRoute[] = UPSTREAM_ROUTES,
): OpenApiObject {
  const named: Record<string, v.GenericSchema> = {
    ErrorBody: ErrorBodySchema,
    SuccessEnvelope: SuccessEnvelopeSchema,
    IdempotencyKey: IdempotencyKeySchema,
  };
  for (const route of routes) {
    if (route.body !== undefined) named[bodyName(route)] = route.body;
    if (route.query !== undefined) named[queryName(route)] = route.query;
  }
  const schemas = convertSchemas(named);
  const queries = new Map<string, JsonSchema>();
  for (const route of routes) {
    const query = schemas[queryName(route)];
    if (query === undefined) continue;
    queries.set(route.name, query);
    // Query schemas are published as parameters, not as components.
    delete schemas[queryName(route)];
  }
  const paths: Record<string, Record<string, OpenApiObject>> = {
    [HEALTH_PATH]: { get: healthOperation() },
    [OPENAPI_PATH]: { get: documentOperation() },
  };
  for (const route of routes) {
    const path = openApiPath(route.pattern);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route, queries.get(route.name));
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'edgepay gateway',
      version: '1',
      description:
        'The signing proxy of the payments API (DESIGN 4.1): the same methods and paths as ' +
        'the payment service, authenticated with a bearer token, validated before anything ' +
        'leaves, idempotent on the POSTs that move money.',
    },
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      responses: errorResponseComponents(`${SCHEMA_REF_PREFIX}ErrorBody`),
      headers: HEADERS,
      parameters: {
        IdempotencyKeyRequired: idempotencyParameter(true),
        IdempotencyKeyOptional: idempotencyParameter(false),
        RequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'Propagated to the payment service and echoed on the response.',
          schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,128}$' },
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A caller token.' },
      },
    },
  };
}

function operation(route: UpstreamRoute, query: JsonSchema | undefined): OpenApiObject {
  const parameters: OpenApiObject[] = [{ $ref: '#/components/parameters/RequestId' }];
  for (const [, name] of route.pattern.matchAll(/:(\w+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } });
  }
  const required = new Set(query?.required ?? []);
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    parameters.push({ name, in: 'query', required: required.has(name), schema });
  }
  if (route.idempotency !== 'none') {
    const which = route.idempotency === 'required' ? 'Required' : 'Optional';
    parameters.push({ $ref: `#/components/parameters/IdempotencyKey${which}` });
  }
  const takesBody = route.method !== 'GET';
  return {
    operationId: route.name,
    tags: [route.name.split('.')[0]],
    summary: `${route.method} ${openApiPath(route.pattern)} on the payment service`,
    ...(query?.description === undefined ? {} : { description: query.description }),
    parameters,
    ...(takesBody ? { requestBody: requestBody(route) } : {}),
    responses: {
      '200': {
        description: 'The payment service’s answer, passed through unchanged.',
        headers: {
          'X-Request-Id': { $ref: '#/components/headers/RequestId' },
          ...(route.idempotency === 'none'
            ? {}
            : { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }),
        },
        content: {
          'application/json': { schema: { $ref: `${SCHEMA_REF_PREFIX}SuccessEnvelope` } },
        },
      },
      ...errorResponses(takesBody),
    },
  };
}

function requestBody(route: UpstreamRoute): OpenApiObject {
  if (route.body === undefined) {
    // initiate-activation and cancel take no body; an empty JSON object is accepted too.
    return {
      required: false,
      description: 'No body, or an empty JSON object.',
      content: { 'application/json': { schema: { type: 'object', maxProperties: 0 } } },
    };
  }
  return {
    required: true,
    content: { 'application/json': { schema: { $ref: `${SCHEMA_REF_PREFIX}${bodyName(route)}` } } },
  };
}

function errorResponses(takesBody: boolean): Record<string, OpenApiObject> {
  return Object.fromEntries(
    ERROR_RESPONSES.filter(({ status }) => takesBody || !BODY_ONLY_STATUSES.has(status)).map(
      ({ status, name }) => [String(status), { $ref: `#/components/responses/${name}` }],
    ),
  );
}

function idempotencyParameter(required: boolean): OpenApiObject {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required,
    description:
      'draft-ietf-httpapi-idempotency-key-header: the same key replays the first answer ' +
      '(Idempotent-Replayed: true); with another request it is 422, while in flight 409.',
    schema: { $ref: `${SCHEMA_REF_PREFIX}IdempotencyKey` },
  };
}

function healthOperation(): OpenApiObject {
  return {
    operationId: 'health',
    tags: ['gateway'],
    summary: 'Liveness check; needs no token.',
    security: [],
    responses: {
      '200': {
        description: 'The gateway is up.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { status: { const: 'ok' } },
              required: ['status'],
            },
          },
        },
      },
    },
  };
}

function documentOperation(): OpenApiObject {
  return {
    operationId: 'openapi',
    tags: ['gateway'],
    summary: 'This document.',
    responses: {
      '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': {} } },
      '401': { $ref: '#/components/responses/Unauthorized' },
    },
  };
}

function pascal(name: string): string {
  return name.replace(/(?:^|\.)(\w)/g, (_, first: string) => first.toUpperCase());
}

function bodyName(route: UpstreamRoute): string {
  return `${pascal(route.name)}Request`;
}

function queryName(route: UpstreamRoute): string {
  return `${pascal(route.name)}Query`;
}
