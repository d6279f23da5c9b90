/**
 * Deferred confirmation of money webhooks through the real Worker, the real D1 of
 * miniflare and the confirm sandbox over HTTP: a webhook that arrives before its record
 * reads as final (the sandbox's `webhook_early` rule) or while the upstream is down (its
 * `error` rule) is stored `awaiting_confirmation`, answered 200, and delivered once a
 * re-check run by the Worker's real queue handler confirms it; duplicates and concurrent
 * re-checks fan it out once. Each test uses its own references.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERIES_QUEUE } from '../../../worker/relay/consumer.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  addRule,
  checkMessage,
  control,
  deliveryIdsOf,
  emitted,
  firedCount,
  ingest,
  runMessages,
  sandboxClient,
  storedEvent,
  waitUntil,
} from './confirmation-helpers.ts';
import {
  createReceiverSubscription,
  disableTestSubscriptions,
  receivedUnder,
  runQueue,
} from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

/** How long reads lag behind a `webhook_early` record, in ms: long enough to re-check inside it. */
const LAG_MS = 3000;

async function payment(): Promise<string> {
  const reference = `cd_pay_${crypto.randomUUID()}`;
  await sandboxClient().payments.initialize({
    email: 'buyer@example.com',
    amount: '2500.00',
    currency: 'NGN',
    reference,
  });
  return reference;
}

const paymentStatus = async (reference: string) =>
  (await sandboxClient().payments.verify(reference)).status;

/** Runs delivery messages through the real consumer; returns the bodies the receiver got under `key`. */
async function deliver(sent: MessageSendRequest[], key: string): Promise<string[]> {
  const deliveries = sent.filter((message) => 'deliveryId' in (message.body as object));
  await runQueue(
    DELIVERIES_QUEUE,
    deliveries.map((message) => ({ body: message.body })),
  );
  return (await receivedUnder(key)).map((received) => received.body);
}

describe('deferred confirmation', () => {
  it('should hold a charge_success sent before verify says success, then deliver it once a re-check confirms it', async () => {
    const { key } = await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const reference = await payment();
    await addRule({ fault: 'webhook_early', reference, after_ms: LAG_MS });
    await control(`payments/${reference}/complete`, { outcome: 'success' });
    const event = await emitted('charge_success', reference);
    const body = JSON.stringify(event);

    const first = await ingest(body);
    expect(first.res.status).toBe(200);
    const held = await storedEvent(event.event_id);
    expect(held.status).toBe('awaiting_confirmation');
    expect(held.confirmation).toMatchObject({ reason: 'status processing', checks: 1 });
    expect(held.confirmation?.nextCheckAt).toBe(held.receivedAt + 10_000);
    expect(first.sent).toEqual([checkMessage(event.event_id, 1, 10)]);
    expect(await deliveryIdsOf(event.event_id)).toEqual([]);

    // The 10 s re-check comes while reads still lag: the next one is a minute later.
    const second = await runMessages(first.sent);
    expect(second).toEqual([checkMessage(event.event_id, 2, 60)]);
    const still = await storedEvent(event.event_id);
    expect(still).toMatchObject({ status: 'awaiting_confirmation' });
    expect(still.confirmation?.checks).toBe(2);
    expect(still.confirmation?.nextCheckAt).toBe((still.confirmation?.checkedAt ?? 0) + 60_000);
    expect(await deliveryIdsOf(event.event_id)).toEqual([]);

    await waitUntil(() => paymentStatus(reference), 'success');
    const third = await runMessages(second);
    const confirmed = await storedEvent(event.event_id);
    expect(confirmed.status).toBe('confirmed');
    expect(confirmed.confirmation).toMatchObject({
      reason: 'status success',
      checks: 3,
      nextCheckAt: null,
    });
    const deliveryIds = await deliveryIdsOf(event.event_id);
    expect(deliveryIds).toHaveLength(1);
    expect(third).toEqual([
      { body: { deliveryId: deliveryIds[0], subscriptionId: expect.any(String) } },
    ]);
    expect(await deliver(third, key)).toEqual([body]);

    // Late copies of the earlier check messages, and the provider's retry, fan out nothing.
    expect(await runMessages([...first.sent, ...second])).toEqual([]);
    const retry = await ingest(body);
    expect(await retry.res.json()).toMatchObject({ duplicate: true });
    expect(retry.sent).toEqual([]);
    expect(await deliveryIdsOf(event.event_id)).toEqual(deliveryIds);
  });

  it('should hold a disbursement_failed while verify still says processing, then deliver it', async () => {
    const { key } = await createReceiverSubscription({ eventTypes: ['disbursement_failed'] });
    const reference = `cd_tr_${crypto.randomUUID()}`;
    await addRule({ fault: 'webhook_early', reference, after_ms: LAG_MS });
    await sandboxClient().transfers.initialize({
      reference,
      amount: 150,
      currency: 'NGN',
      customer_name: 'Grace Hopper',
      customer_email: 'grace@example.com',
      destination_bank_account: '0000000000',
      destination_bank_code: '058',
      destination_bank_name: 'GTBank',
    });
    // Settles the transfer (account 0000000000 fails): the webhook goes out at once.
    await control('clock/advance', { seconds: 10 });
    const event = await emitted('disbursement_failed', reference);
    const first = await ingest(JSON.stringify(event));
    expect(first.res.status).toBe(200);
    expect(await storedEvent(event.event_id)).toMatchObject({
      status: 'awaiting_confirmation',
      confirmation: { reason: 'status processing', checks: 1 },
    });
    expect(first.sent).toEqual([checkMessage(event.event_id, 1, 10)]);

    await waitUntil(
      async () => (await sandboxClient().transfers.verify(reference)).status,
      'failed',
    );
    const second = await runMessages(first.sent);
    expect(await storedEvent(event.event_id)).toMatchObject({
      status: 'confirmed',
      confirmation: { reason: 'status failed', checks: 2 },
    });
    expect(await deliver(second, key)).toEqual([JSON.stringify(event)]);
  });

  it('should store a money event (200) while the upstream answers 503, and deliver it after recovery', async () => {
    const { key } = await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const reference = await payment();
    await control(`payments/${reference}/complete`, { outcome: 'success' });
    const rule = await addRule({
      fault: 'error',
      reference,
      route: 'GET /payments/verify/:reference',
      status: 503,
      times: 1,
    });
    const event = await emitted('charge_success', reference);

    const first = await ingest(JSON.stringify(event));
    expect(first.res.status).toBe(200);
    expect(await first.res.json()).toMatchObject({ event_id: event.event_id, duplicate: false });
    expect(await firedCount(rule)).toBe(1);
    const held = await storedEvent(event.event_id);
    expect(held.status).toBe('awaiting_confirmation');
    expect(held.confirmation?.reason).toMatch(/^the service could not answer: .*503/);
    expect(first.sent).toEqual([checkMessage(event.event_id, 1, 10)]);

    const second = await runMessages(first.sent);
    expect((await storedEvent(event.event_id)).status).toBe('confirmed');
    expect(await deliver(second, key)).toEqual([JSON.stringify(event)]);
  });

  it('should fan out once when two re-checks of the same step run at the same time', async () => {
    const subscribers = [
      await createReceiverSubscription({ eventTypes: ['charge_success'] }),
      await createReceiverSubscription({ eventTypes: ['charge_success'] }),
    ];
    const reference = await payment();
    const event = {
      event_type: 'charge_success',
      event_id: `evt_cd_${crypto.randomUUID()}`,
      timestamp: new Date().toISOString(),
      data: { reference, amount: 2500, currency: 'NGN' },
    };
    const first = await ingest(JSON.stringify(event));
    expect((await storedEvent(event.event_id)).status).toBe('awaiting_confirmation');
    await control(`payments/${reference}/complete`, { outcome: 'success' });

    // Two copies of one message in one batch: the consumer runs them concurrently.
    const sent = await runMessages([...first.sent, ...first.sent]);
    const deliveryIds = await deliveryIdsOf(event.event_id);
    expect(deliveryIds).toHaveLength(2);
    expect(sent.map((message) => message.body)).toEqual(
      expect.arrayContaining(
        deliveryIds.map((deliveryId) => ({ deliveryId, subscriptionId: expect.any(String) })),
      ),
    );
    expect(sent).toHaveLength(2);
    expect((await storedEvent(event.event_id)).confirmation?.checks).toBe(2);
    for (const { key } of subscribers) {
      expect(await deliver(sent, key)).toEqual([JSON.stringify(event)]);
    }
  });

  describe('a provider retry of an event awaiting confirmation', () => {
    it('should count no check while the record is still not final', async () => {
      const reference = await payment();
      const body = JSON.stringify({
        event_type: 'charge_success',
        event_id: `evt_cd_${crypto.randomUUID()}`,
        timestamp: new Date().toISOString(),
        data: { reference, amount: 2500, currency: 'NGN' },
      });
      const eventId = JSON.parse(body).event_id as string;
      await ingest(body);
      const retry = await ingest(body);
      expect(await retry.res.json()).toMatchObject({ duplicate: true });
      expect(retry.sent).toEqual([]);
      expect((await storedEvent(eventId)).confirmation?.checks).toBe(1);
    });

    it('should fan the event out at once when its lookup now confirms it', async () => {
      const { key } = await createReceiverSubscription({ eventTypes: ['charge_success'] });
      const reference = await payment();
      const body = JSON.stringify({
        event_type: 'charge_success',
        event_id: `evt_cd_${crypto.randomUUID()}`,
        timestamp: new Date().toISOString(),
        data: { reference, amount: 2500, currency: 'NGN' },
      });
      const eventId = JSON.parse(body).event_id as string;
      const first = await ingest(body);
      await control(`payments/${reference}/complete`, { outcome: 'success' });
      const retry = await ingest(body);
      expect(await retry.res.json()).toMatchObject({ duplicate: true });
      expect(await storedEvent(eventId)).toMatchObject({
        status: 'confirmed',
        confirmation: { checks: 2 },
      });
      expect(await deliver(retry.sent, key)).toEqual([body]);
      // The check the ingress scheduled finds the event settled: nothing more.
      expect(await runMessages(first.sent)).toEqual([]);
    });
  });
});
