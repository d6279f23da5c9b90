// The gateway's OpenAPI 3.1 document, generated from the route tables (UPSTREAM_ROUTES, the
// proxied endpoints; GATEWAY_ROUTES, the gateway's own) and the valibot schemas (issue 4
// point 8): nothing here lists an endpoint or a field by hand.
import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { GATEWAY_ROUTES, type GatewayRoute } from '../routes/gateway-routes.ts';
import { WEBHOOK_TOLERANCE_SEC } from '../routes/webhooks.ts';
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
  securitySchemes,
} from './components.ts';
import { gatewayOperation, gatewaySchemas } from './gateway-operations.ts';
import { componentName, openApiPath, routeParameters } from './parameters.ts';
import { convertSchemas, SCHEMA_REF_PREFIX } from './schemas.ts';

export { OPENAPI_PATH } from './components.ts';
export { openApiPath } from './parameters.ts';

/** The OpenAPI version the document follows. */
export const OPENAPI_VERSION = '3.1.0';

/**
 * Builds the document (DESIGN 4.1 to 4.3 routes, DESIGN 4.4 bodies, DESIGN 4.5 statuses):
 * one operation per proxied route with its path and query parameters, the
 * `Idempotency-Key` header (required on `idempotency: 'required'` routes, optional on
 * `optional` ones) and the request body schema; one operation per gateway route (health,
 * this document, `POST /webhooks`, `/admin/*`) with its own security scheme, body, query
 * and success status; the security schemes `bearerAuth` (the default), `adminToken` and
 * `webhookSignature`.
 *
 * @param routes - the proxied routes. @default UPSTREAM_ROUTES
 * @param gatewayRoutes - the gateway's own routes. @default GATEWAY_ROUTES
 * @returns the OpenAPI 3.1 document as JSON-ready data.
 * @throws {Error} when a schema uses a valibot feature the converter cannot describe.
 */
export function buildOpenApiDocument(
  routes: readonly UpstreamRoute[] = UPSTREAM_ROUTES,
  gatewayRoutes: readonly GatewayRoute[] = GATEWAY_ROUTES,
): OpenApiObject {
  const components = new SchemaNames({
    ErrorBody: ErrorBodySchema,
    SuccessEnvelope: SuccessEnvelopeSchema,
    IdempotencyKey: IdempotencyKeySchema,
  });
  for (const route of routes) {
    if (route.body !== undefined) components.add(bodyName(route), route.body);
    if (route.query !== undefined) components.add(queryName(route), route.query);
  }
  for (const route of gatewayRoutes) {
    for (const [name, schema] of gatewaySchemas(route)) components.add(name, schema);
  }
  const schemas = convertSchemas(components.named);
  const queries = new Map<string, JsonSchema>();
  for (const route of [...routes, ...gatewayRoutes]) {
    const name = queryName(route);
    const query = schemas[name];
    if (query === undefined) continue;
    queries.set(route.name, query);
    // Query schemas are published as parameters, not as components.
    delete schemas[name];
  }
  const paths: Record<string, Record<string, OpenApiObject>> = {};
  const refOf = (name: string) => `${SCHEMA_REF_PREFIX}${components.canonical(name)}`;
  for (const route of gatewayRoutes) {
    const path = openApiPath(route.pattern);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = gatewayOperation(
      route,
      queries.get(route.name),
      refOf,
    );
  }
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
        "leaves, idempotent on the POSTs that move money. Also the webhook relay's ingress " +
        '(DESIGN 4.2, signed by the payment service) and the admin API (DESIGN 4.3, the ' +
        'admin token).',
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
      securitySchemes: securitySchemes(WEBHOOK_TOLERANCE_SEC),
    },
  };
}

/**
 * The schemas to convert, by component name; a schema met again under another name keeps
 * its first name (the admin routes answer with the `SuccessEnvelope` itself).
 */
class SchemaNames {
  readonly named: Record<string, v.GenericSchema>;
  readonly #first = new Map<v.GenericSchema, string>();
  readonly #alias = new Map<string, string>();

  constructor(initial: Readonly<Record<string, v.GenericSchema>>) {
    this.named = {};
    for (const [name, schema] of Object.entries(initial)) this.add(name, schema);
  }

  add(name: string, schema: v.GenericSchema): void {
    const first = this.#first.get(schema);
    if (first === undefined) {
      this.named[name] = schema;
      this.#first.set(schema, name);
    } else {
      this.#alias.set(name, first);
    }
  }

  canonical(name: string): string {
    return this.#alias.get(name) ?? name;
  }
}

function operation(route: UpstreamRoute, query: JsonSchema | undefined): OpenApiObject {
  const parameters = routeParameters(route.pattern, query);
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

function bodyName(route: UpstreamRoute): string {
  return componentName(route.name, 'Request');
}

function queryName(route: { readonly name: string }): string {
  return componentName(route.name, 'Query');
}
