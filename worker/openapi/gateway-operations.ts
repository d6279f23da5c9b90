// The OpenAPI operations of the gateway's own routes (GATEWAY_ROUTES: health, this document,
// the webhook ingress, the admin API), generated from the route table (DESIGN 4.1 to 4.3).
import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import {
  type GatewayAuth,
  type GatewayRoute,
  gatewayErrorStatuses,
} from '../routes/gateway-routes.ts';
import { ERROR_RESPONSES, INGRESS_ERROR_RESPONSES, type OpenApiObject } from './components.ts';
import { componentName, routeParameters } from './parameters.ts';

/** `security` of an operation by its route's auth; `undefined` keeps the document's default (a caller token). */
const SECURITY: Readonly<Record<GatewayAuth, readonly OpenApiObject[] | undefined>> = {
  none: [],
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

/**
 * The component names of a gateway route's schemas (`<Name>Request`, `<Name>Query`,
 * `<Name>Response`), for the schemas it has.
 *
 * @param route - the gateway route.
 * @returns the route's valibot schemas by component name.
 */
export function gatewaySchemas(route: GatewayRoute): Array<readonly [string, v.GenericSchema]> {
  const named: Array<readonly [string, v.GenericSchema]> = [];
  if (route.body !== undefined)
    named.push([componentName(route.name, 'Request'), route.body.schema]);
  if (route.query !== undefined) named.push([componentName(route.name, 'Query'), route.query]);
  if (route.response !== undefined) {
    named.push([componentName(route.name, 'Response'), route.response]);
  }
  return named;
}

/**
 * One gateway route as an OpenAPI operation: its tag, summary, security (none, the default
 * caller token, `adminToken` or `webhookSignature`), path and query parameters, JSON body,
 * success status and the DESIGN 4.4 error responses of {@link gatewayErrorStatuses}.
 *
 * @param route - the gateway route.
 * @param query - its converted query schema, if it has one.
 * @param refOf - the `$ref` of a converted schema, by the component name it was given
 *   (a schema shared with another name, like the success envelope, resolves to that name).
 * @returns the operation object.
 * @throws {Error} when an error status has no response component.
 */
export function gatewayOperation(
  route: GatewayRoute,
  query: JsonSchema | undefined,
  refOf: (name: string) => string,
): OpenApiObject {
  const security = SECURITY[route.auth];
  const success: OpenApiObject = {
    description: SUCCESS[route.status],
    headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    ...(route.response === undefined
      ? {}
      : {
          content: {
            'application/json': { schema: { $ref: refOf(componentName(route.name, 'Response')) } },
          },
        }),
  };
  return {
    operationId: route.name,
    tags: [route.tag],
    summary: route.summary,
    ...(query?.description === undefined ? {} : { description: query.description }),
    ...(security === undefined ? {} : { security }),
    parameters: routeParameters(route.pattern, query),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: route.body.required,
            content: {
              'application/json': {
                schema: { $ref: refOf(componentName(route.name, 'Request')) },
              },
            },
          },
        }),
    responses: {
      [String(route.status)]: success,
      ...Object.fromEntries(
        gatewayErrorStatuses(route).map((status) => [
          String(status),
          { $ref: `#/components/responses/${errorComponent(route.auth, status)}` },
        ]),
      ),
    },
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
