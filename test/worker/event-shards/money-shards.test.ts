/**
 * Money events at the ingress when events are spread over three shards, against the confirm
 * sandbox over HTTP: an event that cannot be confirmed yet is stored awaiting confirmation in
 * its placed shard, its re-check message names that shard, and the provider's retry of the
 * same bytes, once the payment is final, confirms it where it is and fans it out there.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { fetchGateway, useCapturedLogs } from '../helpers.ts';
import { control, emitted, sandboxClient } from '../relay/confirmation-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  recordingQueue,
} from '../relay/delivery-helpers.ts';
import { webhookRequest } from '../routes/webhook-helpers.ts';
import { database, eventIdIn, THREE_SHARDS_SETTING } from '../shard-databases.ts';
import { deliveriesIn, holdersOf } from './event-shard-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** A payment of 2,500.00 NGN under `reference` at the confirm sandbox, completed when asked. */
async function payment(reference: string, complete: boolean): Promise<void> {
  await sandboxClient().payments.initialize({
    email: 'buyer@example.com',
    amount: '2500.00',
    currency: 'NGN',
    reference,
  });
  if (complete) await control(`payments/${reference}/complete`, { outcome: 'success' });
}

/** POSTs `body` signed, with three shards and confirmation on; returns the answer and what it sent. */
async function post(body: string) {
  const queue = recordingQueue();
  const res = await fetchGateway(await webhookRequest(body), {
    D1_SHARDS: THREE_SHARDS_SETTING,
    CONFIRM_MONEY_EVENTS: 'true',
    UPSTREAM_BASE_URL: inject('confirmSandboxUrl'),
    DELIVERIES: queue.queue,
  } as Partial<Env>);
  return {
    status: res.status,
    body: (await res.json()) as { duplicate?: boolean },
    sent: queue.batches.flat(),
  };
}

describe('money events over three shards', () => {
  it('should keep an unconfirmable event awaiting in its shard, re-check it there, and confirm it there on the retry', async () => {
    const { subscription } = await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const paid = `ms_pay_${crypto.randomUUID()}`;
    await payment(paid, true);
    const envelope = await emitted('charge_success', paid);
    // The same charge for a payment the service does not know yet.
    const later = `ms_later_${crypto.randomUUID()}`;
    const eventId = await eventIdIn('DB_SHARD_1');
    const body = JSON.stringify({
      ...envelope,
      event_id: eventId,
      data: { ...envelope.data, reference: later },
    });

    const first = await post(body);
    expect(first).toMatchObject({ status: 200, body: { duplicate: false } });
    expect(await holdersOf(eventId)).toEqual(['DB_SHARD_1']);
    const stored = await findWebhookEvent(database('DB_SHARD_1'), eventId);
    expect(stored?.status).toBe('awaiting_confirmation');
    expect(await deliveriesIn('DB_SHARD_1', eventId)).toEqual([]);
    expect(first.sent.map((message) => message.body)).toEqual([
      { kind: 'confirm', eventId, check: 1, shard: 'DB_SHARD_1' },
    ]);

    await payment(later, true);
    const retry = await post(body);
    expect(retry).toMatchObject({ status: 200, body: { duplicate: true } });
    expect((await findWebhookEvent(database('DB_SHARD_1'), eventId))?.status).toBe('confirmed');
    const deliveries = await deliveriesIn('DB_SHARD_1', eventId);
    expect(deliveries.map((d) => d.subscription_id)).toContain(subscription.id);
    expect(await findWebhookEvent(env.DB, eventId)).toBeUndefined();
  });
});
