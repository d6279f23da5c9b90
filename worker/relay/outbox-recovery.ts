/**
 * What a subscription's outbox (worker/relay/subscriber-outbox.ts) does with an attempt that
 * was out when its instance stopped: only a restart empties the in-memory list of attempts
 * out while a stored row says one is.
 */
import { findDelivery } from '../db/deliveries.ts';
import { listDeliveryAttempts } from '../db/delivery-attempts.ts';
import { shardOfMessage } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';
import { type OutboxRow, outboxMessage, type SettleDecision } from './outbox-store.ts';
import type { OutboxState } from './outbox-subscription.ts';
import { settleDelivery } from './settle-delivery.ts';

/**
 * Settles an interrupted attempt without sending anything: a delivery settled meanwhile is
 * let go; one whose attempt was recorded before the stop keeps the recorded next attempt time;
 * otherwise the attempt may have reached the subscriber, so it is recorded as an attempt
 * without an answer (`interrupted: ...`) and retried on the schedule, never sent again
 * silently.
 *
 * @param env - bindings (`DB`, the event shards).
 * @param row - the outbox row, marked out since `sendingSince` (its body names the shard).
 * @param outbox - the outbox's copy of its subscription and its attempt counts.
 * @returns what the outbox does with the row next.
 * @throws whatever D1 throws (the row stays marked out, to be checked again).
 */
export async function recoverInterrupted(
  env: Env,
  row: OutboxRow,
  outbox: OutboxState,
): Promise<SettleDecision> {
  const startedAt = row.sendingSince ?? Date.now();
  const shard = shardOfMessage(env, row.body);
  const delivery = await findDelivery(shard.db, row.deliveryId);
  if (delivery === undefined || delivery.status !== 'pending') return {};
  const attempts = await listDeliveryAttempts(shard.db, row.deliveryId);
  if (attempts.some((attempt) => attempt.startedAt >= startedAt)) {
    // Recorded before the stop: only the outbox's own step was lost.
    const dueAt = delivery.nextAttemptAt ?? Date.now();
    return { retryInSec: Math.max(0, Math.ceil((dueAt - Date.now()) / 1000)) };
  }
  logEvent('warn', 'delivery_attempt_interrupted', { delivery_id: row.deliveryId });
  const { message, decision } = outboxMessage(row);
  await settleDelivery(
    message,
    env,
    row.deliveryId,
    {
      kind: 'refused',
      startedAt,
      error:
        'interrupted: the gateway stopped during this attempt, which may have reached the subscriber',
      retry: true,
    },
    outbox,
  );
  return decision();
}
