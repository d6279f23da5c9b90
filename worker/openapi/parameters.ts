// Pieces every operation of the gateway's OpenAPI document shares, whichever route table it
// comes from: path templates, component names and the request id, path and query parameters.
import type { JsonSchema } from '@valibot/to-json-schema';
import type { OpenApiObject } from './components.ts';

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
 * The component name of a route's schema: the route name in PascalCase plus a suffix
 * (`payments.initialize` + `Request` is `PaymentsInitializeRequest`,
 * `admin.subscriptions.rotate_secret` + `Response` is `AdminSubscriptionsRotateSecretResponse`).
 *
 * @param routeName - a route's `name`.
 * @param suffix - `Request`, `Query` or `Response`.
 * @returns the name under `#/components/schemas/`.
 */
export function componentName(routeName: string, suffix: string): string {
  const pascal = routeName.replace(/(?:^|[._])([a-zA-Z0-9])/g, (_, first: string) =>
    first.toUpperCase(),
  );
  return `${pascal}${suffix}`;
}

/**
 * The parameters of an operation: the `X-Request-Id` header, one required
 * path parameter per `:param` of the pattern, and one query parameter per property of the
 * converted query schema (required as the schema says).
 *
 * @param pattern - the itty-router pattern.
 * @param query - the converted query schema, if the route reads one.
 * @returns the parameter objects, in that order.
 */
export function routeParameters(pattern: string, query: JsonSchema | undefined): OpenApiObject[] {
  const parameters: OpenApiObject[] = [{ $ref: '#/components/parameters/RequestId' }];
  for (const [, name] of pattern.matchAll(/:(\w+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } });
  }
  const required = new Set(query?.required ?? []);
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    parameters.push({ name, in: 'query', required: required.has(name), schema });
  }
  return parameters;
}
