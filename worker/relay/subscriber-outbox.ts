import { DurableObject } from 'cloudflare:workers';
import { loadSettings } from '../config.ts';
import { findDeliveryOrderAcrossShards } from '../db/delivery-order.ts';
import { type EventShard, everyEventShard, shardOfMessage } from '../db/event-shards.ts';
import { logEvent } from '../http/log.ts';
import { deadLetterDelivery } from './dead-letter.ts';
import { type AttemptCounts, AttemptTally } from './outbox-health.ts';
import { limitsOf, OutboxGate, type OutboxLimits, pauseUntil } from './outbox-limits.ts';
import { recoverInterrupted } from './outbox-recovery.ts';
import {
  type OutboxRow,
  type OutboxStore,
  openOutboxStore,
  outboxMessage,
  type SettleDecision,
} from './outbox-store.ts';
import { type OutboxState, SubscriptionCopy } from './outbox-subscription.ts';
import { prepareDelivery } from './prepare-delivery.ts';
import { recheckSentDelivery } from './recheck-delivery.ts';
import { MAX_DELIVERY_ATTEMPTS, retryDelay } from './retry-schedule.ts';
import { DELIVERY_TIMEOUT_MS, sendPreparedDelivery } from './send-delivery.ts';
import { settleDelivery } from './settle-delivery.ts';

/**
 * How long one run keeps starting attempts, in milliseconds; then it lets the attempts out
 * finish and continues in a new run (an alarm), so no handler runs unbounded.
 */
const RUN_BUDGET_MS = 60_000;

/**
 * How long a delivery held for an earlier event of its reference waits before it asks again,
 * in milliseconds; the earlier one settling in this outbox wakes it at once.
 */
const ORDER_RECHECK_MS = 60_000;

/** The storage key of the subscription id the outbox is for. */
const SUBSCRIPTION_KEY = 'subscription_id';

/** Most scheduling rounds of one run (each starts what is due or waits for one attempt). */
const MAX_ROUNDS = 10_000;

/**
 * When the alarm checks on a delivery just taken over, in milliseconds: after the longest
 * attempt, so it finds an attempt a restart interrupted (the run it started is gone).
 */
const WATCHDOG_MS = DELIVERY_TIMEOUT_MS + 30_000;

/** What the consumer hands over: the queue message's body and its delivery count. */
export interface Handover {
  /** The subscription this outbox is for (its limits are read from D1 by this id). */
  readonly subscriptionId: string;
  /** The DELIVERIES message body (`deliveryId`, and the operator's request if any). */
  readonly body: { readonly deliveryId: string } & Record<string, unknown>;
  /** `message.attempts`: 1 for a new message, more when the queue delivers it again. */
  readonly attempts: number;
  /**
   * When the message was sent to the queue (`message.timestamp`), epoch milliseconds: the
   * queue keeps it when it delivers the message again, so it tells a repeat from a new
   * message for the same delivery.
   */
  readonly sentAt: number;
}

/**
 * The outbox of one subscription (one instance per subscription id): the consumer hands
 * each delivery to it and acks its queue message at once, and the outbox sends, records and
 * schedules the retries of its own deliveries, so a subscriber that stalls until the
 * timeout holds up only its own deliveries, never another subscription's. Every delivery it
 * holds is a row of its SQLite storage, written before the request goes out, so a restart
 * finds what it was doing (docs/architecture.md, "Delivery outbox: one Durable Object per
 * subscription"). Attempts go through the same steps as before: prepare, send, re-check,
 * settle, with the same D1 records.
 *
 * @example
 * ```ts
 * await env.SUBSCRIBER_OUTBOX.getByName(subscriptionId).accept([
 *   { subscriptionId, body, attempts: message.attempts, sentAt: message.timestamp.getTime() },
 * ]);
 * ```
 */
export class SubscriberOutbox extends DurableObject<Env> {
  /**
   * The fetch deliveries and DNS-over-HTTPS lookups go through.
   *
   * @internal The tests put a fake network here.
   */
  network: typeof fetch = (input, init) => fetch(input, init);
  readonly #store: OutboxStore;
  readonly #gate: OutboxGate;
  readonly #tally: AttemptTally;
  #subscription: SubscriptionCopy | undefined;
  /** Attempts this instance has out, by delivery id. */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Rows whose last step failed here (D1 down), by delivery id: not taken again before. */
  readonly #failedUntil = new Map<string, number>();
  #run: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = openOutboxStore(ctx.storage.sql);
    this.#gate = new OutboxGate(ctx.storage.kv);
    this.#tally = new AttemptTally(ctx.storage.kv);
  }

  /**
   * Takes deliveries over, the messages of one queue batch for this subscription in one call;
   * the consumer acks their messages once this returns. A delivery it already holds is not
   * taken twice: a message the queue delivers again (the consumer stopped before its ack)
   * changes nothing, and a new message for it (the sweeper, an operator's retry) makes it due
   * now, unless an attempt is out.
   *
   * @param handovers - each message's body and delivery count, all for this subscription.
   */
  async accept(handovers: readonly Handover[]): Promise<void> {
    const now = Date.now();
    for (const handover of handovers) this.#store.accept(handover, now);
    const subscriptionId = handovers[0]?.subscriptionId;
    // Written once: every later write of the same id would be a row written per delivery.
    if (
      subscriptionId !== undefined &&
      this.ctx.storage.kv.get(SUBSCRIPTION_KEY) !== subscriptionId
    ) {
      this.ctx.storage.kv.put(SUBSCRIPTION_KEY, subscriptionId);
    }
    // The watchdog: should this instance stop mid-send, the alarm finds the attempt. An
    // earlier alarm (a retry falling due) is kept.
    const watchdog = now + WATCHDOG_MS;
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > watchdog) await this.ctx.storage.setAlarm(watchdog);
    this.#kick();
  }

  /**
   * Told by the admin API that its subscription changed (disabled, a new secret, other event
   * types, limits): the next attempt reads it again from D1 instead of this isolate's copy.
   */
  subscriptionChanged(): void {
    this.#subscription?.forget();
  }

  /**
   * The attempts to the subscriber over the success-rate window, counted here as each
   * attempt is recorded (worker/relay/outbox-health.ts).
   *
   * @param now - the end of the window, epoch milliseconds.
   */
  attemptCounts(now: number): AttemptCounts {
    return this.#tally.recent(now);
  }

  /** The alarm: a retry falls due, or the watchdog after a restart. */
  override async alarm(): Promise<void> {
    this.#kick();
    await this.#run;
  }

  /** The outbox's copy of its subscription and its attempt counts. */
  #state(): OutboxState {
    // The id stored by the first handover; an object reached only by the admin API has none
    // and is named by it.
    const id = this.ctx.storage.kv.get<string>(SUBSCRIPTION_KEY) ?? this.ctx.id.name ?? '';
    if (this.#subscription?.id !== id) this.#subscription = new SubscriptionCopy(id);
    return { subscription: this.#subscription, tally: this.#tally };
  }

  /** Starts a run, or wakes the one running so it sees what changed. */
  #kick(): void {
    if (this.#run !== undefined) {
      this.#wake?.();
      return;
    }
    this.#run = this.#drain().finally(() => {
      this.#run = undefined;
      // A delivery taken over while the run was ending is not left for the alarm.
      const now = Date.now();
      if (this.#store.dueCount(now) > 0 && this.#gate.openAt() <= now) this.#kick();
    });
    // Keeps the object running for the run once `accept` has answered (compatibility dates
    // from 2026-10-01 on); an eviction anyway is what the watchdog alarm is for.
    this.ctx.waitUntil(this.#run);
  }

  async #drain(): Promise<void> {
    const started = Date.now();
    const limits = await this.#limits();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = Date.now();
      if (now - started < RUN_BUDGET_MS && this.#gate.openAt() <= now) this.#startDue(now, limits);
      if (this.#inFlight.size === 0) break;
      // Woken by an attempt ending, a new handover, or the next retry falling due.
      let timer: ReturnType<typeof setTimeout> | null = null;
      const woken = new Promise<void>((resolve) => {
        this.#wake = resolve;
        const next = this.#wakeAt();
        if (next !== null && now - started < RUN_BUDGET_MS) {
          timer = setTimeout(resolve, Math.max(0, Math.min(next - now, RUN_BUDGET_MS)));
        }
      });
      await Promise.race([...this.#inFlight.values(), woken]);
      clearTimeout(timer);
    }
    await Promise.allSettled(this.#inFlight.values());
    this.#tally.save(Date.now());
    const next = this.#wakeAt();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  /** The subscription's limits, read once per run (a change applies from the next run). */
  async #limits(): Promise<OutboxLimits> {
    // Unreadable (D1 down): the defaults; the attempts will meet the same outage.
    const subscription = await this.#state()
      .subscription.current(this.env)
      .catch(() => undefined);
    return limitsOf(subscription);
  }

  /** Starts what is due, within the subscription's in-flight bound and rate. */
  #startDue(now: number, limits: OutboxLimits): void {
    const free = limits.maxInFlight - this.#inFlight.size;
    // Under a rate limit one attempt starts per round; the gate says when the next may.
    const limit = limits.intervalMs === null ? free : Math.min(free, 1);
    const skip = (id: string) => this.#inFlight.has(id) || (this.#failedUntil.get(id) ?? 0) > now;
    for (const row of this.#store.due(now, limit, skip)) {
      this.#gate.take(now, limits.intervalMs);
      this.#start(row, now, limits.ordered);
    }
  }

  /** When the next row falls due, not before the gate opens; `null` when none is held. */
  #wakeAt(): number | null {
    const next = this.#store.nextDueAt(WATCHDOG_MS);
    return next === null ? null : Math.max(next, this.#gate.openAt());
  }

  #start(row: OutboxRow, now: number, ordered: boolean): void {
    // Written before the request goes out (the output gate holds the request until the
    // write is stored), so a restart knows an attempt may have reached the subscriber.
    const interrupted = row.sendingSince !== null;
    this.#store.markSending(row.deliveryId, now);
    this.#failedUntil.delete(row.deliveryId);
    const attempt = (
      interrupted ? recoverInterrupted(this.env, row, this.#state()) : this.#attempt(row, ordered)
    )
      .then((decision) => this.#apply(row, decision))
      .catch((error: unknown) => {
        // D1 failed after the attempt: the row stays marked out, and the watchdog's time
        // (nextDueAt) brings it back as interrupted, checked against D1 then.
        this.#failedUntil.set(row.deliveryId, Date.now() + WATCHDOG_MS);
        logEvent('error', 'delivery_outbox_failed', {
          delivery_id: row.deliveryId,
          error_message: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => this.#inFlight.delete(row.deliveryId));
    this.#inFlight.set(row.deliveryId, attempt);
  }

  /**
   * One attempt: prepare, send, re-check, settle (worker/relay/consumer.ts's steps). For an
   * ordered subscription, none while an earlier event of the reference may still come first.
   */
  async #attempt(row: OutboxRow, ordered: boolean): Promise<SettleDecision> {
    const { message, decision } = outboxMessage(row);
    let reference: string | null = null;
    try {
      if (ordered) {
        const order = await findDeliveryOrderAcrossShards(
          this.env,
          eventShards(this.env),
          shardOfMessage(this.env, row.body),
          row.deliveryId,
        );
        reference = order?.reference ?? null;
        if (order?.blocked === true) {
          logEvent('info', 'delivery_held_for_order', { delivery_id: row.deliveryId, reference });
          return { parkMs: ORDER_RECHECK_MS, reference };
        }
      }
      const shard = shardOfMessage(this.env, row.body);
      const state = this.#state();
      const prepared = await prepareDelivery(
        row.deliveryId,
        shard,
        this.env,
        this.network,
        state.subscription,
      );
      const result =
        prepared.kind === 'ready'
          ? await recheckSentDelivery(
              prepared,
              await sendPreparedDelivery(prepared, this.network),
              this.network,
            )
          : prepared;
      // A 429 or 503 with Retry-After holds every delivery of the subscription, not only this.
      const pause = pauseUntil(result);
      if (pause !== null) this.#gate.pause(pause);
      await settleDelivery(message, this.env, row.deliveryId, result, state);
    } catch (error) {
      logEvent('error', 'delivery_message_failed', {
        delivery_id: row.deliveryId,
        subscription_id: this.ctx.id.name ?? null,
        error_message: error instanceof Error ? error.message : String(error),
      });
      return { retryInSec: retryDelay(row.attempts, undefined), reference };
    }
    return { ...decision(), reference };
  }

  /** Removes a settled delivery, or schedules its retry (or dead-letters it at the last). */
  async #apply(row: OutboxRow, decision: SettleDecision): Promise<void> {
    const now = Date.now();
    if (decision.parkMs !== undefined) {
      this.#store.park(row.deliveryId, decision.reference ?? null, now + decision.parkMs);
      return;
    }
    if (decision.retryInSec !== undefined && row.attempts < MAX_DELIVERY_ATTEMPTS) {
      this.#store.scheduleRetry(row.deliveryId, decision.retryInSec, now);
      return;
    }
    if (decision.retryInSec !== undefined) {
      await deadLetterDelivery(this.env, shardOfMessage(this.env, row.body), row.deliveryId);
    }
    this.#store.remove(row.deliveryId);
    // Settled (delivered, failed, dead-lettered): the later events of its reference may go.
    if (decision.reference != null) this.#store.wake(decision.reference, now);
  }
}

// Every event shard an earlier event of a reference may be stored in; with unreadable
// settings none (nothing is sent then anyway: the prepare step skips every delivery).
function eventShards(env: Env): readonly EventShard[] {
  const loaded = loadSettings(env);
  return loaded.ok ? everyEventShard(env, loaded.settings) : [];
}
