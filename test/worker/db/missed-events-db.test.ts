/**
 * D1 queries of the events a subscription missed while disabled (worker/db/missed-event-pages.ts)
 * against the real D1: which events count (the fan-out's own type rules, the disable's span
 * with its minute of margin, never before the subscription existed, none that already has a
 * delivery to it), and their keyset pages.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { countMissedEvents, readMissedEventsPage } from '../../../worker/db/missed-event-pages.ts';
import type { RecoveryJob } from '../../../worker/db/recovery-jobs.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  insertDeliveries,
  storeEvent,
} from '../relay/delivery-helpers.ts';

afterEach(disableTestSubscriptions);

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** A disabled subscription created ten hours before `disabledAt`. */
async function disabledAt(disabledAt: number, eventTypes: readonly string[] | null) {
  const { subscription } = await createReceiverSubscription({ eventTypes, enabled: false });
  await env.DB.prepare('UPDATE subscriptions SET created_at = ?2, disabled_at = ?3 WHERE id = ?1')
    .bind(subscription.id, disabledAt - 10 * HOUR_MS, disabledAt)
    .run();
  return subscription.id;
}

/** Every missed event id, read in pages of `pageSize` as a job would. */
async function missedIds(subscriptionId: string, since: number, until: number, pageSize = 100) {
  let job: RecoveryJob = {
    id: 'rcv_test',
    kind: 'missed_events',
    filter: { since, until, subscriptionId, status: null, eventType: null },
    operator: null,
    state: 'running',
    pages: 0,
    cursor: null,
    matched: 0,
    enqueued: 0,
    skippedDisabled: 0,
    error: null,
    startedAt: until,
    updatedAt: until,
    finishedAt: null,
  };
  const ids: string[] = [];
  for (let page = 0; page < 50; page++) {
    const candidates = await readMissedEventsPage(env.DB, job, pageSize);
    ids.push(...candidates.map((c) => c.id));
    const last = candidates.at(-1);
    if (last === undefined || candidates.length < pageSize) break;
    job = { ...job, cursor: { at: last.createdAt, id: last.id } };
  }
  return ids;
}

describe('missed events (D1)', () => {
  it('should take the events fanned out from a minute before the disable to the re-enable, never one already delivered to it', async () => {
    const type = `missed_${crypto.randomUUID()}`;
    const t = Date.now() - HOUR_MS;
    const id = await disabledAt(t, [type]);
    const racing = await storeEvent(type, { receivedAt: t - 30_000 });
    const inside = await storeEvent(type, { receivedAt: t + MINUTE_MS });
    const replayed = await storeEvent(type, { receivedAt: t + 2 * MINUTE_MS });
    await insertDeliveries([
      { eventId: replayed.eventId, subscriptionId: id, status: 'pending', createdAt: t },
    ]);
    await storeEvent(type, { receivedAt: t - 2 * MINUTE_MS });
    await storeEvent(type, { receivedAt: t + 30 * MINUTE_MS });
    await storeEvent(type, { receivedAt: t + 3 * MINUTE_MS, status: 'unconfirmed' });

    const until = t + 10 * MINUTE_MS;
    expect(await missedIds(id, t, until)).toEqual([racing.eventId, inside.eventId]);
    expect(await countMissedEvents(env.DB, id, t, until, 10)).toEqual({ count: 2, capped: false });
    expect(await countMissedEvents(env.DB, id, t, until, 1)).toEqual({ count: 1, capped: true });
  });

  it("should match the relay's own events as the fan-out does: listed only, never the one about it", async () => {
    const t = Date.now() - HOUR_MS;
    const listing = await disabledAt(t, ['subscription.disabled']);
    const everything = await disabledAt(t, null);
    const aboutListing = await storeEvent('subscription.disabled', {
      receivedAt: t + 1,
      data: { subscription_id: listing },
    });
    const aboutOther = await storeEvent('subscription.disabled', {
      receivedAt: t + 2,
      data: { subscription_id: everything },
    });
    const payment = await storeEvent(`payment_${crypto.randomUUID()}`, { receivedAt: t + 3 });

    const until = t + MINUTE_MS;
    const listed = await missedIds(listing, t, until);
    expect(listed).toContain(aboutOther.eventId);
    expect(listed).not.toContain(aboutListing.eventId);
    expect(listed).not.toContain(payment.eventId);
    const all = await missedIds(everything, t, until);
    expect(all).toContain(payment.eventId);
    expect(all).not.toContain(aboutOther.eventId);
    expect(all).not.toContain(aboutListing.eventId);
  });

  it('should walk the events in keyset pages without repeating or skipping one', async () => {
    const type = `missed_${crypto.randomUUID()}`;
    const t = Date.now() - HOUR_MS;
    const id = await disabledAt(t, [type]);
    const stored: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Two events per millisecond: the event id breaks the tie.
      stored.push((await storeEvent(type, { receivedAt: t + Math.floor(i / 2) })).eventId);
    }
    const expected = [...stored].sort((a, b) => {
      const at = (eventId: string) => Math.floor(stored.indexOf(eventId) / 2);
      return at(a) - at(b) || (a < b ? -1 : 1);
    });
    expect(await missedIds(id, t, t + MINUTE_MS, 2)).toEqual(expected);
  });
});
