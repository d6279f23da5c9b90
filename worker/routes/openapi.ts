import { buildOpenApiDocument } from '../openapi/document.ts';
import type { GatewayRoute } from './route.ts';

let serialized: string | undefined;

/**
 * `GET /openapi.json`: every gateway route (the proxied ones, the health
 * check, this document, the webhook ingress and the admin API) as an OpenAPI 3.1 document
 * generated from the route table and the valibot schemas, built on first use and kept for
 * the isolate's lifetime (the table and schemas never change while it runs). Bearer auth
 * applies, as on every route but the open ones.
 *
 * @param routes - the route table (handed over by the table, which this file cannot import).
 * @returns 200 JSON.
 * @throws {Error} when the document cannot be generated (a schema without an override).
 */
export function openApiResponse(routes: readonly GatewayRoute[]): Response {
  serialized ??= JSON.stringify(buildOpenApiDocument(routes));
  return new Response(serialized, {
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}
