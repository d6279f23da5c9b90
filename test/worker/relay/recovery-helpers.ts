/**
 * Helpers of the bulk recovery tests: many deliveries written at once (their events first),
 * with chosen statuses and creation times, and the admin calls of `/admin/deliveries/recover`.
 */
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import type { DeliveryStatus } from '../../../worker/db/deliveries.ts';
import { insertWebhookEventStatement } from '../../../worker/db/webhook-events.ts';
import { fetchGateway } from '../helpers.ts';
import { adminRequest, dataOf } from '../routes/admin/admin-helpers.ts';

/** A job as `GET /admin/deliveries/recover/jobs/:id` shows it. */
export interface RecoveryJobData {
  id: string;
  state: 'running' | 'done' | 'failed';
  filter: {
    since: string;
    until: string | null;
    subscription_id: string | null;
    status: string | null;
    event_type: string | null;
  };
  operator: string | null;
  matched: number;
  enqueued: number;
  skipped_disabled: number;
  pages: number;
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** Options of {@link seedDeliveries}. */
export interface SeedInit {
  readonly subscriptionId: string;
  readonly eventType: string;
  readonly count: number;
  /** @default 'failed' */
  readonly status?: DeliveryStatus;
  /** Creation time of the first, epoch ms; each next one is 1 ms later. */
  readonly createdAt: number;
}

/**
 * Writes `count` events of `eventType` and one delivery of each to `subscriptionId`, in one
 * batch (no fan-out, no enqueue).
 *
 * @returns the delivery ids, oldest first.
 */
export async function seedDeliveries(init: SeedInit): Promise<string[]> {
  const prefix = crypto.randomUUID();
  const rows = Array.from({ length: init.count }, (_, index) => ({
    eventId: `evt_${prefix}_${String(index).padStart(4, '0')}`,
    deliveryId: `dlv_${prefix}_${String(index).padStart(4, '0')}`,
    at: init.createdAt + index,
  }));
  const events = await Promise.all(
    rows.map((row) =>
      insertWebhookEventStatement(env.DB, {
        eventId: row.eventId,
        eventType: init.eventType,
        receivedAt: row.at,
        reference: null,
        rawBody: JSON.stringify({ event_type: init.eventType, event_id: row.eventId, data: {} }),
      }),
    ),
  );
  await env.DB.batch([
    ...events,
    ...rows.map((row) =>
      env.DB.prepare(
        `INSERT INTO deliveries (id, event_id, subscription_id, status, attempts, next_attempt_at,
           last_status, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 0, NULL, NULL, ?5, ?5)`,
      ).bind(row.deliveryId, row.eventId, init.subscriptionId, init.status ?? 'failed', row.at),
    ),
  ]);
  return rows.map((row) => row.deliveryId);
}

/** `POST /admin/deliveries/recover` (or `/preview`) with a JSON body. */
export function recoverRequest(body: unknown, preview = false, headers?: HeadersInit): Request {
  const path = preview ? '/admin/deliveries/recover/preview' : '/admin/deliveries/recover';
  return adminRequest('POST', path, { json: body, ...(headers === undefined ? {} : { headers }) });
}

/** Starts (or joins) a job through the API, expecting 202, and returns it. */
export async function startRecovery(
  body: Record<string, unknown>,
  overrides: Partial<Env> = {},
): Promise<RecoveryJobData> {
  const res = await fetchGateway(recoverRequest(body), overrides);
  expect(res.status).toBe(202);
  const job = await dataOf<RecoveryJobData>(res);
  // A 202 names where the job's progress is read.
  expect(res.headers.get('Location')).toBe(
    `/admin/deliveries/recover/jobs/${encodeURIComponent(job.id)}`,
  );
  return job;
}

/** A job's progress through `GET /admin/deliveries/recover/jobs/:id`, expecting 200. */
export async function recoveryJob(id: string): Promise<RecoveryJobData> {
  const res = await fetchGateway(
    adminRequest('GET', `/admin/deliveries/recover/jobs/${encodeURIComponent(id)}`),
  );
  expect(res.status).toBe(200);
  return dataOf<RecoveryJobData>(res);
}

/** What the deliveries' attempts were started by: `trigger/operator` → count. */
export async function attemptTriggers(
  deliveryIds: readonly string[],
): Promise<Record<string, number>> {
  const { results } = await env.DB.prepare(
    `SELECT trigger, operator, COUNT(*) AS n FROM delivery_attempts
     WHERE delivery_id IN (SELECT value FROM json_each(?1)) GROUP BY trigger, operator`,
  )
    .bind(JSON.stringify(deliveryIds))
    .all<{ trigger: string; operator: string | null; n: number }>();
  return Object.fromEntries(results.map((r) => [`${r.trigger}/${r.operator ?? ''}`, r.n]));
}
