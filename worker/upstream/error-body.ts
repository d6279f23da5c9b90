import type { UpstreamResponse } from './client.ts';

/** Longest upstream body text repeated in `upstream.body` when it is not JSON, in characters. */
const MAX_UPSTREAM_TEXT_CHARS = 1024;

/** Code of an upstream error whose body names none. */
const GENERIC_UPSTREAM_CODE = 'upstream_error';

/**
 * The body the caller gets for an upstream 4xx/5xx: the gateway's own error body
 * (docs/gateway.md, "Error body"), with the upstream's `message`, `code` and `issues`
 * kept at the top level (the SDK's error parser, lib/api-errors.ts, reads them there)
 * and the gateway's own `request_id`, plus `upstream: { status, body }`, the upstream's
 * body parsed when it is JSON, otherwise its text cut to {@link MAX_UPSTREAM_TEXT_CHARS}.
 */
interface UpstreamErrorBody {
  readonly status: 'error';
  readonly message: string;
  readonly code: string;
  readonly issues?: readonly unknown[];
  readonly request_id: string;
  readonly upstream: { readonly status: number; readonly body: unknown };
}

/**
 * Builds the {@link UpstreamErrorBody} of an upstream error response.
 *
 * @param upstream - the upstream's response (status 400 or above), body read.
 * @param requestId - the gateway's request id.
 * @returns the body to send with the upstream's status.
 */
export function upstreamErrorBody(
  upstream: UpstreamResponse,
  requestId: string,
): UpstreamErrorBody {
  const text = new TextDecoder().decode(upstream.body);
  const json = parseJson(text);
  const fields: Record<string, unknown> =
    typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : {};
  const message =
    typeof fields.message === 'string' && fields.message !== ''
      ? fields.message
      : `The payment service answered ${upstream.status}`;
  const code =
    typeof fields.code === 'string' && fields.code !== '' ? fields.code : GENERIC_UPSTREAM_CODE;
  return {
    status: 'error',
    message,
    code,
    ...(Array.isArray(fields.issues) ? { issues: fields.issues } : {}),
    request_id: requestId,
    upstream: {
      status: upstream.status,
      body: json ?? (text === '' ? null : truncate(text)),
    },
  };
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function truncate(text: string): string {
  return text.length <= MAX_UPSTREAM_TEXT_CHARS
    ? text
    : `${text.slice(0, MAX_UPSTREAM_TEXT_CHARS)}…`;
}
