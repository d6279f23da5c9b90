/**
 * Helpers of the event sharding tests: the three test databases (test/support/worker-test-options.ts
 * binds the two beside `DB`), event ids placed in a chosen shard, where an event's rows are,
 * and the ingress called with `D1_SHARDS` set.
 */
import { expect } from 'vitest';
import type { DeliveryMessage } from '../../../worker/relay/consumer.ts';
import { fetchGateway } from '../helpers.ts';
import { recordingQueue } from '../relay/delivery-helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import { database, SHARDS, type ShardName } from '../shard-databases.ts';

/** The shards holding a row of `eventId`. */
export async function holdersOf(eventId: string): Promise<ShardName[]> {
  const found = await Promise.all(
    SHARDS.map(async (name) => {
      const row = await database(name)
        .prepare('SELECT 1 AS found FROM webhook_events WHERE event_id = ?1')
        .bind(eventId)
        .first();
      return row === null ? undefined : name;
    }),
  );
  return found.filter((name): name is ShardName => name !== undefined);
}

/** The deliveries of `eventId` stored in `name`. */
export async function deliveriesIn(
  name: ShardName,
  eventId: string,
): Promise<{ id: string; subscription_id: string; status: string; attempts: number }[]> {
  const { results } = await database(name)
    .prepare(
      'SELECT id, subscription_id, status, attempts FROM deliveries WHERE event_id = ?1 ORDER BY id',
    )
    .bind(eventId)
    .all<{ id: string; subscription_id: string; status: string; attempts: number }>();
  return results;
}

/** What one signed POST /webhooks answered, and the delivery messages it enqueued. */
export interface Ingested {
  readonly status: number;
  readonly body: { code?: string; duplicate?: boolean };
  readonly messages: DeliveryMessage[];
}

/**
 * Posts a signed webhook of `eventType` with id `eventId` through the real Worker, with
 * `D1_SHARDS` as given and a recording `DELIVERIES`.
 */
export async function ingest(
  shards: string,
  eventId: string,
  eventType: string,
  data: Record<string, unknown> = { reference: `ref_${crypto.randomUUID()}` },
  timestamp = '2030-01-01T00:00:00.000Z',
): Promise<Ingested> {
  const queue = recordingQueue();
  const body = JSON.stringify(
    envelope({ event_id: eventId, event_type: eventType, data, timestamp }),
  );
  const res = await fetchGateway(await webhookRequest(body), {
    D1_SHARDS: shards,
    DELIVERIES: queue.queue,
  } as Partial<Env>);
  const messages = queue.batches.flat().map((message) => message.body as DeliveryMessage);
  expect(res.status).toBe(200);
  return {
    status: res.status,
    body: (await res.json()) as Ingested['body'],
    messages,
  };
}
