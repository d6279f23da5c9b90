// The gateway's OpenAPI 3.1 document, generated from its one route table (ROUTES: its own
// routes and one proxied route per endpoint of the SDK's table), the valibot schemas and the
// event-type catalog (its `webhooks` section): nothing here lists an endpoint or a field by hand.
import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { WebhookEnvelopeSchema } from '../relay/envelope.ts';
import type { GatewayAuth, GatewayRoute } from '../routes/route.ts';
import { WEBHOOK_TOLERANCE_SEC } from '../routes/webhooks.ts';
import { ADMIN_ANSWERS } from './admin-answers.ts';
import { answerName, answerSchema, finishRecords, recordSchemas } from './answers.ts';
import {
  DOCUMENT_INFO,
  ERROR_RESPONSES,
  ErrorBodySchema,
  errorResponseComponents,
  HEADERS,
  IdempotencyKeySchema,
  INGRESS_ERROR_RESPONSES,
  type OpenApiObject,
  SERVERS,
  securitySchemes,
  UPSTREAM_ERROR_RESPONSE,
} from './components.ts';
import { componentName, openApiPath, routeParameters } from './parameters.ts';
import { convertSchemas, SCHEMA_REF_PREFIX } from './schemas.ts';
import { errorStatuses } from './statuses.ts';
import { webhookSection } from './webhooks.ts';

/** @internal Exported for the tests, which call it directly. */
export { openApiPath } from './parameters.ts';

/** The OpenAPI version the document follows. */
const OPENAPI_VERSION = '3.1.0';

/**
 * Builds the document: one operation per route of the table with its security scheme
 * (none; none or `adminToken`; the default caller token `bearerAuth`; `adminToken`; or
 * `webhookSignature`), path and query parameters, the `Idempotency-Key` header (required
 * where the endpoint moves money, optional on the other proxied writes), its JSON body,
 * success status and error responses (each with the gateway's error body, except a
 * route's `failureResponse`, which has its own). Its `webhooks` section describes what the
 * relay sends subscribers: one entry per event type of the catalog, the envelope with that
 * type's `data`, signed with the Standard Webhooks headers.
 *
 * @param routes - the routes to describe (the route table's `ROUTES`).
 * @returns the OpenAPI 3.1 document as JSON-ready data.
 * @throws {Error} when a schema uses a valibot feature the converter cannot describe, or an
 *   error status has no response component.
 */
export function buildOpenApiDocument(routes: readonly GatewayRoute[]): OpenApiObject {
  const components = new SchemaNames({
    ErrorBody: ErrorBodySchema,
    IdempotencyKey: IdempotencyKeySchema,
    ...recordSchemas(),
  });
  for (const route of routes) {
    if (route.body !== undefined) components.add(schemaName(route, 'Request'), route.body.schema);
    if (route.query !== undefined) components.add(schemaName(route, 'Query'), route.query);
    // A proxied route's body is the service's answer: see below.
    const response = ownResponse(route);
    if (response !== undefined) components.add(schemaName(route, 'Response'), response);
    if (route.failureResponse !== undefined) {
      components.add(schemaName(route, 'Failure'), route.failureResponse.schema);
    }
  }
  // Added last, so the ingress's name for the same schema stays the one published.
  components.add('WebhookEnvelope', WebhookEnvelopeSchema);
  const schemas = convertSchemas(components.named);
  const refOf = (name: string) => `${SCHEMA_REF_PREFIX}${components.canonical(name)}`;
  finishRecords(schemas);
  for (const route of routes) {
    if (route.endpoint !== undefined) {
      schemas[answerName(route.name)] = answerSchema(route.endpoint, schemas, refOf);
    }
  }
  const paths: Record<string, Record<string, OpenApiObject>> = {};
  for (const route of routes) {
    const name = schemaName(route, 'Query');
    // Query schemas are published as parameters, not as components.
    const query = schemas[name];
    const path = openApiPath(route.pattern);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route, query, refOf);
  }
  for (const route of routes) delete schemas[schemaName(route, 'Query')];
  const deliveries = webhookSection(refOf('WebhookEnvelope'));
  return {
    openapi: OPENAPI_VERSION,
    info: DOCUMENT_INFO,
    servers: SERVERS,
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: deliveries.webhooks,
    components: {
      schemas: { ...schemas, ...deliveries.schemas },
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
        ...deliveries.parameters,
      },
      securitySchemes: securitySchemes(WEBHOOK_TOLERANCE_SEC),
    },
  };
}

/**
 * The schemas to convert, by component name; a schema met again under another name keeps
 * its first name.
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

/**
 * The success body of one of the gateway's own routes: an admin route's from
 * {@link ADMIN_ANSWERS}, any other's from its row. `undefined` for a proxied route and a 204.
 *
 * @throws {Error} when an admin route with a body has no schema there.
 */
function ownResponse(route: GatewayRoute): v.GenericSchema | undefined {
  if (route.endpoint !== undefined || route.response === undefined) return undefined;
  if (route.auth !== 'admin') return route.response;
  const answer = ADMIN_ANSWERS[route.name];
  if (answer === undefined) throw new Error(`No success body for ${route.name}`);
  return answer;
}

/** `security` of an operation by its route's auth; `undefined` keeps the document's default (a caller token). */
const SECURITY: Readonly<Record<GatewayAuth, readonly OpenApiObject[] | undefined>> = {
  none: [],
  // `{}` is the open alternative (OpenAPI 3.1, Security Requirement Object).
  'none-or-admin': [{}, { adminToken: [] }],
  bearer: undefined,
  admin: [{ adminToken: [] }],
  'webhook-signature': [{ webhookSignature: [] }],
};

const SUCCESS: Readonly<Record<GatewayRoute['status'], string>> = {
  200: 'OK.',
  201: 'Created.',
  202: 'Accepted: the deliveries are queued.',
  204: 'Done; no body.',
};

function operation(
  route: GatewayRoute,
  query: JsonSchema | undefined,
  refOf: (name: string) => string,
): OpenApiObject {
  const security = SECURITY[route.auth];
  const parameters = routeParameters(route.pattern, query);
  if (route.idempotency !== 'none') {
    const which = route.idempotency === 'required' ? 'Required' : 'Optional';
    parameters.push({ $ref: `#/components/parameters/IdempotencyKey${which}` });
  }
  const body = requestBody(route, refOf);
  return {
    operationId: route.name,
    tags: [tagOf(route)],
    summary:
      route.summary ?? `${route.method} ${openApiPath(route.pattern)} on the payment service`,
    ...(query?.description === undefined ? {} : { description: query.description }),
    ...(security === undefined ? {} : { security }),
    parameters,
    ...(body === undefined ? {} : { requestBody: body }),
    responses: {
      [String(route.status)]: success(route, refOf),
      ...Object.fromEntries(
        errorStatuses(route).map((status) => [
          String(status),
          { $ref: `#/components/responses/${errorComponent(route.auth, status)}` },
        ]),
      ),
      ...(route.failureResponse === undefined
        ? {}
        : {
            [String(route.failureResponse.status)]: {
              description: route.failureResponse.description,
              headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: {
                'application/json': { schema: { $ref: refOf(schemaName(route, 'Failure')) } },
              },
            },
          }),
      ...(route.endpoint === undefined
        ? {}
        : { default: { $ref: `#/components/responses/${UPSTREAM_ERROR_RESPONSE.name}` } }),
    },
  };
}

// The tag grouping an operation: a proxied route's resource (`payments` for
// `payments.initialize`); one of the gateway's own by who may call it.
function tagOf(route: GatewayRoute): string {
  if (route.endpoint !== undefined) return route.name.split('.')[0] ?? route.name;
  return route.auth === 'admin'
    ? 'admin'
    : route.auth === 'webhook-signature'
      ? 'webhooks'
      : 'gateway';
}

function success(route: GatewayRoute, refOf: (name: string) => string): OpenApiObject {
  return {
    description:
      route.endpoint === undefined
        ? SUCCESS[route.status]
        : 'The payment service’s answer, passed through unchanged: enveloped or flat, as ' +
          'the service sends it, around the record the SDK reads.',
    headers: {
      'X-Request-Id': { $ref: '#/components/headers/RequestId' },
      ...(route.idempotency === 'none'
        ? {}
        : { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }),
      ...(route.cache === undefined ? {} : { 'X-Cache': { $ref: '#/components/headers/XCache' } }),
    },
    ...(route.response === undefined
      ? {}
      : {
          content: {
            'application/json': {
              schema: {
                $ref:
                  route.endpoint === undefined
                    ? refOf(schemaName(route, 'Response'))
                    : `${SCHEMA_REF_PREFIX}${answerName(route.name)}`,
              },
            },
          },
        }),
  };
}

function requestBody(
  route: GatewayRoute,
  refOf: (name: string) => string,
): OpenApiObject | undefined {
  if (route.body !== undefined) {
    return {
      required: route.body.required,
      content: {
        'application/json': { schema: { $ref: refOf(schemaName(route, 'Request')) } },
      },
    };
  }
  if (route.endpoint === undefined || route.method === 'GET') return undefined;
  // initiate-activation and cancel take no body; an empty JSON object is accepted too.
  return {
    required: false,
    description: 'No body, or an empty JSON object.',
    content: { 'application/json': { schema: { type: 'object', maxProperties: 0 } } },
  };
}

// The ingress's 401 is a bad signature, not a bad bearer token (InvalidSignature); its 503
// has no proxy counterpart; every other status means what it means on the proxy.
function errorComponent(auth: GatewayAuth, status: number): string {
  const signature = auth === 'webhook-signature' && status === 401;
  const response =
    (signature ? undefined : ERROR_RESPONSES.find((r) => r.status === status)) ??
    INGRESS_ERROR_RESPONSES.find((r) => r.status === status);
  if (response === undefined) throw new Error(`No error response component for status ${status}`);
  return response.name;
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

function schemaName(
  route: GatewayRoute,
  suffix: 'Request' | 'Query' | 'Response' | 'Failure',
): string {
  return componentName(route.name, suffix);
}
