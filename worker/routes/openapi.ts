import type { IRequest } from 'itty-router';
import { buildOpenApiDocument } from '../openapi/document.ts';

export { OPENAPI_PATH } from '../openapi/document.ts';

let serialized: string | undefined;

/**
 * The OpenAPI 3.1 document as JSON text, built on first use and kept for the isolate's
 * lifetime (the route tables and schemas never change while it runs).
 *
 * @returns the serialized document.
 * @throws {Error} when the document cannot be generated (a schema without an override).
 */
function openApiJson(): string {
  serialized ??= JSON.stringify(buildOpenApiDocument());
  return serialized;
}

/**
 * `GET /openapi.json`: every gateway route (the proxied ones, the health
 * check, this document, the webhook ingress and the admin API) as an OpenAPI 3.1 document
 * generated from the route tables and the valibot schemas. Bearer auth applies, as on
 * every route but the open ones.
 *
 * @param request - the incoming request.
 * @returns 200 JSON.
 */
export function openapi(_request: IRequest): Response {
  return new Response(openApiJson(), {
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}
