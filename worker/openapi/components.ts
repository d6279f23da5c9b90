// The reusable parts of the gateway's OpenAPI document: the error body, the error
// responses with their stable codes, the headers and the security schemes.
import * as v from 'valibot';
import { KEY_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../lib/index.ts';

/** Path of the document itself (a caller token, like every route but the health check and the ingress). */
export const OPENAPI_PATH = '/openapi.json';

/** An OpenAPI object as plain JSON (the document is served as JSON). */
export type OpenApiObject = Record<string, unknown>;

/** The document's `info`: what the gateway is, and the package's license (package.json). */
export const DOCUMENT_INFO: OpenApiObject = Object.freeze({
  title: 'edgepay gateway',
  version: '1',
  description:
    'The signing proxy of the payments API: the same methods and paths as the payment ' +
    'service, authenticated with a bearer token, validated before anything leaves, ' +
    "idempotent on the POSTs that move money. Also the webhook relay's ingress (signed " +
    'by the payment service) and the admin API (the admin token).',
  license: { name: 'MIT', identifier: 'MIT' },
});

/**
 * Where the gateway runs: `npm start`'s default local address, and a placeholder for a
 * deployment (each deployment has its own address; clients pass theirs as the base URL).
 */
export const SERVERS: readonly OpenApiObject[] = Object.freeze([
  { url: 'http://127.0.0.1:8787', description: 'Local: `npm start` (its default port).' },
  {
    url: 'https://edgepay-gateway.{subdomain}.workers.dev',
    description:
      'A deployment on workers.dev (the Worker is named `edgepay-gateway` in wrangler.toml); ' +
      'a custom domain or route replaces the whole address.',
    variables: {
      subdomain: { default: 'your-subdomain', description: 'The account’s workers.dev subdomain.' },
    },
  },
]);

/**
 * The error body every gateway error uses. `code` is a stable snake_case code (the
 * gateway's own, or the upstream's when its error passes through); other
 * properties (upstream details) may follow.
 */
export const ErrorBodySchema = v.object({
  status: v.literal('error'),
  message: v.string(),
  code: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/)),
  issues: v.optional(
    v.array(v.object({ path: v.string(), message: v.string() }), 'Field problems'),
  ),
  request_id: v.string(),
});

/** The API's success envelope (docs/payments-api.md, "Endpoints"): `status`, usually `data`, sometimes `message`. */
export const SuccessEnvelopeSchema = v.object({
  status: v.string(),
  message: v.optional(v.string()),
  data: v.optional(v.unknown()),
});

/** An `Idempotency-Key` value: printable ASCII, at most 255 characters. */
export const IdempotencyKeySchema = v.pipe(v.string(), v.minLength(1), v.maxLength(255));

/** Response header components, by name. */
export const HEADERS: Readonly<Record<string, OpenApiObject>> = Object.freeze({
  // Every answer carries it, errors included.
  RequestId: {
    ...header('The request id: the caller’s X-Request-Id when sane, else a new UUID.'),
    required: true,
  },
  RetryAfter: header('Seconds to wait before retrying.', 'integer'),
  Allow: header('The methods this path answers to.'),
  WwwAuthenticate: header('Always `Bearer`.'),
  IdempotentReplayed: header('`true` when the answer is the stored answer to an earlier request.'),
  XCache: header(
    '`HIT` when the answer came from the gateway’s cache, `MISS` when the request could be ' +
      'cached and the service answered; absent when the request is not one the cache keeps.',
  ),
});

/** One error status of the gateway as an OpenAPI response component. */
interface ErrorResponse {
  readonly status: number;
  readonly name: string;
  readonly description: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The error responses, by status, each with the error body. */
export const ERROR_RESPONSES: readonly ErrorResponse[] = Object.freeze([
  {
    status: 400,
    name: 'BadRequest',
    description:
      '`validation_failed` (every issue listed with its path), `idempotency_key_missing`.',
  },
  {
    status: 401,
    name: 'Unauthorized',
    description: '`unauthorized`: missing or unknown bearer token.',
    headers: { 'WWW-Authenticate': 'WwwAuthenticate' },
  },
  { status: 403, name: 'Forbidden', description: '`forbidden`: outside the caller’s routes.' },
  { status: 404, name: 'NotFound', description: '`not_found`: unknown route or record.' },
  {
    status: 405,
    name: 'MethodNotAllowed',
    description: '`method_not_allowed`: the path answers to other methods.',
    headers: { Allow: 'Allow' },
  },
  {
    status: 409,
    name: 'Conflict',
    description:
      '`idempotency_key_in_flight` (with Retry-After), `idempotency_record_mismatch`, `idempotency_answer_lost`, a conflict of the service, or on the admin API `event_unconfirmed` and `subscription_disabled` (a retry or replay to a disabled subscription, with its reason).',
    headers: { 'Retry-After': 'RetryAfter' },
  },
  {
    status: 413,
    name: 'PayloadTooLarge',
    description: '`payload_too_large`: body over the limit.',
  },
  {
    status: 415,
    name: 'UnsupportedMediaType',
    description: '`unsupported_media_type`: a body must be application/json (UTF-8).',
  },
  {
    status: 422,
    name: 'UnprocessableContent',
    description: '`idempotency_key_reused` with another request, or a rule of the service.',
  },
  {
    status: 429,
    name: 'TooManyRequests',
    description: '`rate_limited`.',
    headers: { 'Retry-After': 'RetryAfter' },
  },
  { status: 500, name: 'InternalError', description: '`internal_error`.' },
  { status: 502, name: 'BadGateway', description: '`upstream_unreachable`.' },
  { status: 504, name: 'GatewayTimeout', description: '`upstream_timeout`.' },
]);

/**
 * Error responses of the gateway's own routes that the proxy's table above has no room
 * for (their status means something else there): the webhook ingress's 401
 * `invalid_signature` (no `WWW-Authenticate`) and its 503 while a money event cannot be
 * confirmed.
 */
export const INGRESS_ERROR_RESPONSES: readonly ErrorResponse[] = Object.freeze([
  {
    status: 401,
    name: 'InvalidSignature',
    description:
      '`invalid_signature`: the HMAC headers are missing, stale or do not match the body.',
  },
  {
    status: 503,
    name: 'ServiceUnavailable',
    description:
      '`upstream_unreachable`: a money event could not be confirmed upstream; nothing is ' +
      'stored, retry later.',
    headers: { 'Retry-After': 'RetryAfter' },
  },
]);

/**
 * Any other status of a proxied route: the payment service's errors keep their status
 * (a 503 while it is down, for one), with the gateway's error body. The `default` response
 * of every proxied operation.
 */
export const UPSTREAM_ERROR_RESPONSE: Omit<ErrorResponse, 'status'> = Object.freeze({
  name: 'UpstreamError',
  description:
    'Another error status of the payment service, kept (`code` the service’s, else ' +
    '`upstream_error`; `upstream` holds its status and body), with its Retry-After.',
  headers: { 'Retry-After': 'RetryAfter' },
});

/** Statuses only a request with a body can get. */
export const BODY_ONLY_STATUSES: ReadonlySet<number> = new Set([413, 415]);

/**
 * The `components.responses` entries for {@link ERROR_RESPONSES},
 * {@link INGRESS_ERROR_RESPONSES} and {@link UPSTREAM_ERROR_RESPONSE}.
 *
 * @param errorBodyRef - `$ref` of the error body schema.
 * @returns responses by component name.
 */
export function errorResponseComponents(errorBodyRef: string): Record<string, OpenApiObject> {
  return Object.fromEntries(
    [...ERROR_RESPONSES, ...INGRESS_ERROR_RESPONSES, UPSTREAM_ERROR_RESPONSE].map(
      ({ name, description, headers = {} }) => [
        name,
        {
          description,
          headers: Object.fromEntries(
            Object.entries({ 'X-Request-Id': 'RequestId', ...headers }).map(
              ([field, component]) => [field, { $ref: `#/components/headers/${component}` }],
            ),
          ),
          content: { 'application/json': { schema: { $ref: errorBodyRef } } },
        },
      ],
    ),
  );
}

/**
 * The security schemes: a caller token (`bearerAuth`, the default),
 * the admin token (`adminToken`, `/admin/*` only) and the payment service's HMAC headers
 * (`webhookSignature`, `POST /webhooks` only).
 *
 * @param toleranceSec - accepted `X-Timestamp` skew of the ingress, in seconds.
 * @returns `components.securitySchemes`.
 */
export function securitySchemes(toleranceSec: number): Record<string, OpenApiObject> {
  return {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description: 'A caller token (`GATEWAY_CALLERS`).',
    },
    adminToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        'The admin token, the `ADMIN_TOKEN` secret, on `/admin/*` only: caller ' +
        'tokens are refused there and the admin token is refused elsewhere. An unset ' +
        '`ADMIN_TOKEN` turns the admin API off (every request 401).',
    },
    webhookSignature: {
      type: 'apiKey',
      in: 'header',
      name: SIGNATURE_HEADER,
      description:
        `The payment service's HMAC headers: \`${KEY_ID_HEADER}\` ` +
        `(its key id, not checked), \`${TIMESTAMP_HEADER}\` (unix seconds, within ` +
        `${toleranceSec} s of the gateway's clock, past or future) and ` +
        `\`${SIGNATURE_HEADER}\` (lowercase hex HMAC-SHA256, keyed with \`WEBHOOK_SECRET\`, ` +
        'of `<timestamp>:<exact body bytes>`). Without `WEBHOOK_SECRET` the ingress answers ' +
        '503 unless `ALLOW_UNSIGNED_WEBHOOKS=true` (local development only).',
    },
  };
}

function header(description: string, type: 'string' | 'integer' = 'string'): OpenApiObject {
  return { description, schema: { type } };
}
