/**
 * Helpers of the admin API tests: requests with the admin token of vitest.config.ts,
 * the subscription and event shapes the API answers with, and the check of a refused query.
 */
import { expect } from 'vitest';
import { errorBody, fetchGateway, type GatewayRequestInit, gatewayRequest } from '../../helpers.ts';

/** `ADMIN_TOKEN` as configured in vitest.config.ts. */
export const ADMIN_TOKEN = 'test-admin-token';

/** A subscription as the admin API shows it (secret only on create and rotate). */
export interface SubscriptionData {
  id: string;
  url: string;
  event_types: string[] | null;
  description: string | null;
  enabled: boolean;
  max_per_second: number | null;
  max_in_flight: number | null;
  ordered: boolean;
  health: {
    state: 'healthy' | 'failing' | 'disabled';
    reason: string | null;
    changed_at: string;
    failing_since: string | null;
    disabled_at: string | null;
    success_rate: {
      window_hours: number;
      attempts: number;
      succeeded: number;
      failed: number;
      rate: number | null;
    };
  };
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
  /** Only when a PATCH asked `requeue_pending`. */
  requeued?: number;
}

/** An event as `GET /admin/events` lists it. */
export interface EventSummary {
  event_id: string;
  event_type: string;
  status: string;
  received_at: string;
  reference: string | null;
}

/** The client address of this test file's admin requests that carry the admin token. */
const FILE_ADDRESS = `test-${crypto.randomUUID()}`;

/** A request to the admin API with the admin token (unless `token` says otherwise); a `json` body is sent as JSON. */
export function adminRequest(
  method: string,
  path: string,
  init: GatewayRequestInit & { json?: unknown } = {},
): Request {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  // Failed sign-ins are throttled per client address: a request that may fail gets an
  // address of its own, so tests sending wrong tokens on purpose never throttle the ones
  // that follow; the rest share this file's address (its limiter object stays warm).
  if (!headers.has('CF-Connecting-IP')) {
    const token = rest.token === undefined ? ADMIN_TOKEN : rest.token;
    const address = token === ADMIN_TOKEN ? FILE_ADDRESS : `test-${crypto.randomUUID()}`;
    headers.set('CF-Connecting-IP', address);
  }
  if (json !== undefined && !headers.has('Content-Type')) {
    headers.set('Content-Type', 'application/json');
  }
  return gatewayRequest(path, {
    token: ADMIN_TOKEN,
    ...rest,
    method,
    headers,
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

/** Creates a subscription through the API (201 expected) and returns its data, secret included. */
export async function createSubscription(
  body: Record<string, unknown> = {},
  overrides: Partial<Env> = {},
): Promise<SubscriptionData> {
  const res = await fetchGateway(
    adminRequest('POST', '/admin/subscriptions', {
      json: { url: 'https://hooks.example.com/edgepay', ...body },
    }),
    overrides,
  );
  const json = (await res.json()) as { status: string; data: SubscriptionData };
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json.data;
}

/** Reads a success body `{ status: 'success', data }` and returns `data`. */
export async function dataOf<T = SubscriptionData>(res: Response): Promise<T> {
  const json = (await res.json()) as { status: string; data: T };
  expect(json.status).toBe('success');
  return json.data;
}

/** Expects the error body of a 400 `validation_failed` whose issues name exactly `paths`. */
export async function expectValidationFailed(res: Response, paths: readonly string[]) {
  expect(res.status).toBe(400);
  const body = await errorBody(res);
  expect(body).toMatchObject({ status: 'error', code: 'validation_failed' });
  expect(body.request_id).toEqual(expect.any(String));
  expect(body.issues?.map((issue) => issue.path)).toEqual(paths);
}
