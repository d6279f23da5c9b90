/**
 * Storing a webhook event around a change of generation of shards, in each order two copies
 * of one event can meet in: the real store on the real D1 databases, the look into the other
 * generation's shard (or the kept mark) held at a gate (HeldD1) to force the order. A copy
 * that finds another withdraws its own row; it answers as a duplicate when the copy found is
 * settled (kept, or out of any race), else 409 in flight; when both find each other both
 * withdraw, and the provider's retry stores the event once.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { loadSettings, type Settings } from '../../../worker/config.ts';
import { storeWebhookEvent } from '../../../worker/relay/event-store.ts';
import { heldD1 } from '../proxy/held-d1.ts';
import { envelope } from '../routes/webhook-helpers.ts';
import { eventIdIn } from '../shard-databases.ts';
import { deliveriesIn, holdersOf } from './event-shard-helpers.ts';

/** The start of the second generation: one shard (DB), then three. */
const SWITCH = Date.UTC(2031, 2, 1);
const GROWTH = `DB; ${new Date(SWITCH).toISOString()}=DB,DB_SHARD_1,DB_SHARD_2`;

// The look of a copy into the other generation's shard, and the mark of a kept copy.
const LOOK = /SELECT received_at, kept_at FROM webhook_events/;
const MARK = /SET kept_at/;

function settingsWith(shards: string): Settings {
  const loaded = loadSettings({ ...env, D1_SHARDS: shards } as Env);
  if (!loaded.ok) throw new Error('test settings did not load');
  return loaded.settings;
}

/** A copy of event `eventId` received at `receivedAt`, stored with `bindings` over the test env. */
function store(
  eventId: string,
  type: string,
  receivedAt: number,
  bindings: Partial<Record<'DB' | 'DB_SHARD_1', D1Database>> = {},
) {
  const rawBody = JSON.stringify(envelope({ event_id: eventId, event_type: type }));
  return storeWebhookEvent({ ...env, ...bindings } as Env, settingsWith(GROWTH), {
    event: { eventId, eventType: type, receivedAt, reference: null, rawBody },
    status: 'received',
    confirmation: { reason: null, checks: 0, checkedAt: null, nextCheckAt: null },
    fansOut: true,
  });
}

async function subscribed(): Promise<string> {
  const type = `test_${crypto.randomUUID()}`;
  const now = Date.now();
  await env.DB.prepare(
    `INSERT INTO subscriptions (id, url, event_types, enabled, secret, created_at, updated_at)
     VALUES (?1, 'https://example.com/hooks', ?2, 1, 'whsec_x', ?3, ?3)`,
  )
    .bind(`sub_${crypto.randomUUID()}`, JSON.stringify([type]), now)
    .run();
  return type;
}

describe('a webhook event stored around a change of shards', () => {
  it('should have both copies withdraw when each finds the other, and let the retry store it once', async () => {
    const type = await subscribed();
    // Placed in DB under the first generation and in DB_SHARD_1 under the second.
    const id = await eventIdIn('DB_SHARD_1');
    const oldLook = heldD1(LOOK, env.DB_SHARD_1);
    const newLook = heldD1(LOOK, env.DB);
    const old = store(id, type, SWITCH - 1_000, { DB_SHARD_1: oldLook });
    const young = store(id, type, SWITCH + 1_000, { DB: newLook });
    await Promise.all([oldLook.held, newLook.held]);
    expect(await holdersOf(id)).toEqual(['DB', 'DB_SHARD_1']);
    oldLook.release('land');
    newLook.release('land');
    expect(await old).toEqual({ kind: 'in_flight' });
    expect(await young).toEqual({ kind: 'in_flight' });
    // Nothing kept, no delivery left to send: the provider retries both.
    expect(await holdersOf(id)).toEqual([]);
    expect(await deliveriesIn('DB', id)).toEqual([]);
    expect(await deliveriesIn('DB_SHARD_1', id)).toEqual([]);

    const retry = await store(id, type, SWITCH + 5_000);
    expect(retry).toMatchObject({ kind: 'stored', shard: { name: 'DB_SHARD_1' } });
    expect(await store(id, type, SWITCH + 6_000)).toEqual({ kind: 'duplicate' });
    expect(await holdersOf(id)).toEqual(['DB_SHARD_1']);
  });

  it('should answer a copy as a duplicate once the copy it finds is kept', async () => {
    const type = await subscribed();
    const id = await eventIdIn('DB_SHARD_1');
    const first = await store(id, type, SWITCH - 1_000);
    expect(first).toMatchObject({ kind: 'stored', shard: { name: 'DB' }, deliveries: [{}] });
    const copy = await store(id, type, SWITCH + 1_000);
    expect(copy).toEqual({ kind: 'duplicate' });
    expect(await holdersOf(id)).toEqual(['DB']);
    expect(await deliveriesIn('DB_SHARD_1', id)).toEqual([]);
  });

  it('should answer 409 for a copy found before its writer marked it kept, then a duplicate', async () => {
    const type = await subscribed();
    const id = await eventIdIn('DB_SHARD_1');
    const mark = heldD1(MARK, env.DB);
    const first = store(id, type, SWITCH - 1_000, { DB: mark });
    await mark.held;
    // The first copy looked and found nothing; its mark is not in yet.
    expect(await store(id, type, SWITCH + 1_000)).toEqual({ kind: 'in_flight' });
    expect(await holdersOf(id)).toEqual(['DB']);
    mark.release('land');
    expect(await first).toMatchObject({ kind: 'stored', shard: { name: 'DB' } });
    expect(await store(id, type, SWITCH + 2_000)).toEqual({ kind: 'duplicate' });
    expect(await holdersOf(id)).toEqual(['DB']);
  });

  it('should have the older copy withdraw when it looks second and finds the newer one', async () => {
    const type = await subscribed();
    const id = await eventIdIn('DB_SHARD_1');
    const young = await store(id, type, SWITCH + 1_000);
    expect(young).toMatchObject({ kind: 'stored', shard: { name: 'DB_SHARD_1' } });
    // A copy from a writer whose clock is still before the switch.
    expect(await store(id, type, SWITCH - 500)).toEqual({ kind: 'duplicate' });
    expect(await holdersOf(id)).toEqual(['DB_SHARD_1']);
  });

  it('should find an event stored under the old generation days later, and store nothing', async () => {
    const type = await subscribed();
    const id = await eventIdIn('DB_SHARD_1');
    expect(await store(id, type, SWITCH - 10 * 86_400_000)).toMatchObject({ kind: 'stored' });
    expect(await store(id, type, SWITCH + 5 * 86_400_000)).toEqual({ kind: 'duplicate' });
    expect(await holdersOf(id)).toEqual(['DB']);
    expect(await deliveriesIn('DB_SHARD_1', id)).toEqual([]);
  });
});
