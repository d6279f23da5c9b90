/**
 * The confirmation schedule end to end through the real Worker, D1 and the confirm sandbox
 * over HTTP: a forged event is never delivered (an absent record is checked on every step,
 * the 24 h step reached through the cron sweeper, then given up as `unconfirmed`; a record
 * that turns out contradicting settles it at once), and an inbound transfer is confirmed
 * past the first page of 100 transactions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIRMATION_DELAYS_SEC } from '../../../worker/relay/confirmation-schedule.ts';
import { SWEEP_GRACE_MS } from '../../../worker/relay/sweeper.ts';
import { useCapturedLogs } from '../helpers.ts';
import {
  checkMessage,
  control,
  deliveryIdsOf,
  emitted,
  ingest,
  runCron,
  runMessages,
  sandboxClient,
  storedEvent,
} from './confirmation-helpers.ts';
import { createReceiverSubscription, disableTestSubscriptions } from './delivery-helpers.ts';

useCapturedLogs();
afterEach(disableTestSubscriptions);

function chargeFor(reference: string, amount = 2500) {
  return {
    event_type: 'charge_success',
    event_id: `evt_cs_${crypto.randomUUID()}`,
    timestamp: new Date().toISOString(),
    data: { reference, amount, currency: 'NGN' },
  };
}

describe('confirmation schedule', () => {
  it('should check an event naming no record on every step, the last through the sweeper, then give it up as unconfirmed', async () => {
    await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const event = chargeFor(`cs_forged_${crypto.randomUUID()}`);
    let sent = (await ingest(JSON.stringify(event))).sent;
    expect(sent).toEqual([checkMessage(event.event_id, 1, 10)]);
    // Steps that fit a queue delay (12 h at most) go as delayed messages.
    for (let check = 2; check <= 6; check++) {
      sent = await runMessages(sent);
      const delay = CONFIRMATION_DELAYS_SEC[check - 1] ?? 0;
      expect(sent).toEqual([checkMessage(event.event_id, check, delay)]);
      const { confirmation } = await storedEvent(event.event_id);
      expect(confirmation).toMatchObject({ checks: check, reason: 'record not found' });
      expect(confirmation?.nextCheckAt).toBe((confirmation?.checkedAt ?? 0) + delay * 1000);
    }
    // The 24 h step is longer than Queues can delay: no message, the sweeper starts it.
    expect(await runMessages(sent)).toEqual([]);
    const waiting = await storedEvent(event.event_id);
    expect(waiting.status).toBe('awaiting_confirmation');
    const due = waiting.confirmation?.nextCheckAt ?? 0;
    expect(due).toBe((waiting.confirmation?.checkedAt ?? 0) + 86_400_000);
    const ours = (messages: MessageSendRequest[]) =>
      messages.filter((m) => (m.body as { eventId?: string }).eventId === event.event_id);
    expect(ours(await runCron(due))).toEqual([]);
    const swept = ours(await runCron(due + SWEEP_GRACE_MS));
    expect(swept).toEqual([{ body: { kind: 'confirm', eventId: event.event_id, check: 7 } }]);

    expect(await runMessages(swept)).toEqual([]);
    const given = await storedEvent(event.event_id);
    expect(given.status).toBe('unconfirmed');
    expect(given.confirmation).toMatchObject({
      checks: 8,
      reason: 'not confirmed after 8 checks: record not found',
      nextCheckAt: null,
    });
    expect(await deliveryIdsOf(event.event_id)).toEqual([]);
  });

  it('should settle an awaiting event as unconfirmed at once when its record reaches another final state', async () => {
    await createReceiverSubscription({ eventTypes: ['charge_success'] });
    const reference = `cs_pay_${crypto.randomUUID()}`;
    await sandboxClient().payments.initialize({
      email: 'buyer@example.com',
      amount: '2500.00',
      currency: 'NGN',
      reference,
    });
    const event = chargeFor(reference);
    const { sent } = await ingest(JSON.stringify(event));
    expect((await storedEvent(event.event_id)).status).toBe('awaiting_confirmation');
    await control(`payments/${reference}/complete`, { outcome: 'failed' });
    expect(await runMessages(sent)).toEqual([]);
    expect(await storedEvent(event.event_id)).toMatchObject({
      status: 'unconfirmed',
      confirmation: { checks: 2, reason: 'status failed, expected success', nextCheckAt: null },
    });
    expect(await deliveryIdsOf(event.event_id)).toEqual([]);
  });

  it('should confirm a virtual_account_credit that is past the first 100 transactions of its second', async () => {
    await createReceiverSubscription({ eventTypes: ['virtual_account_credit'] });
    const { account, data } = await creditsInOneSecond(110);
    // The provider writes created_at to the whole second, as many do.
    const event = {
      event_type: 'virtual_account_credit',
      event_id: `evt_cs_${crypto.randomUUID()}`,
      timestamp: new Date().toISOString(),
      data: { ...data, created_at: `${String(data.created_at).slice(0, 19)}Z` },
    };
    const transactions = sandboxClient().virtualAccounts.listTransactions({
      account_reference: account,
      start_date: event.data.created_at,
      end_date: event.data.created_at,
      page_size: 100,
    });
    const firstPage = await transactions.page(1);
    expect(firstPage.total).toBeGreaterThan(100);
    expect(firstPage.items.map((item) => item.transaction_id)).not.toContain(data.transaction_id);

    const { res, sent } = await ingest(JSON.stringify(event));
    expect(res.status).toBe(200);
    expect((await storedEvent(event.event_id)).status).toBe('confirmed');
    expect(sent).toHaveLength(1);
  });
});

/**
 * Credits a new virtual account `count` times within one wall-clock second (started just
 * after a second begins, sent in parallel); tries again with a new account when the
 * credits straddled two seconds, at most 3 times. Returns the account and the data of the
 * first credit's webhook (the oldest, so listed last).
 */
async function creditsInOneSecond(
  count: number,
): Promise<{ account: string; data: Record<string, unknown> }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const account = `cs_va_${crypto.randomUUID()}`;
    await sandboxClient().virtualAccounts.create({
      account_reference: account,
      customer_name: 'Ada Lovelace',
      customer_email: 'ada@example.com',
      currency_code: 'NGN',
      bvn: '12345678901',
    });
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
    const first = (await control(`virtual-accounts/${account}/credit`, { amount: 75 })) as {
      created_at: string;
    };
    const credits = (await Promise.all(
      Array.from({ length: count - 1 }, () =>
        control(`virtual-accounts/${account}/credit`, { amount: 75 }),
      ),
    )) as Array<{ created_at: string }>;
    const second = first.created_at.slice(0, 19);
    if (credits.every((credit) => credit.created_at.slice(0, 19) === second)) {
      return { account, data: (await emitted('virtual_account_credit', account, 'oldest')).data };
    }
  }
  throw new Error(`could not credit ${count} times within one second`);
}
