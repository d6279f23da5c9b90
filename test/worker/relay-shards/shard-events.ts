/**
 * Helpers of the relay's housekeeping tests over three event shards (`DB`, `DB_SHARD_1`,
 * `DB_SHARD_2`, bound by test/support/worker-test-options.ts): event ids picked by the
 * placement rule for a chosen shard, events stored there as the ingress stores them (their
 * fan-out reading the subscriptions of `DB`), what a shard holds, and D1 bindings that count
 * the statements prepared on them.
 */
import { fanOutDeliveriesStatement, listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { subscriptionsViewFor } from '../../../worker/db/subscription-snapshot.ts';
import {
  type ConfirmationState,
  findWebhookEvent,
  insertWebhookEventStatement,
  type NewWebhookEvent,
  UNCHECKED,
  type WebhookEventRecord,
  type WebhookEventStatus,
} from '../../../worker/db/webhook-events.ts';
import { database, eventIdIn, type ShardName } from '../shard-databases.ts';

/** Options of {@link storeIn}. */
export interface ShardEventInit {
  readonly eventType: string;
  /** @default a fresh id placed in the shard */
  readonly eventId?: string;
  /** Epoch ms, also the deliveries' creation and due time. @default Date.now() */
  readonly receivedAt?: number;
  /** @default 'received' (fanned out); `awaiting_confirmation` is stored without deliveries */
  readonly status?: WebhookEventStatus;
  readonly confirmation?: ConfirmationState;
  /** @default a small envelope of the type */
  readonly rawBody?: string;
}

/** An event stored in a shard and the deliveries written with it. */
export interface ShardEvent {
  readonly eventId: string;
  readonly deliveryIds: string[];
}

/**
 * Stores an event in `shard` as the ingress does: the insert and, unless it awaits
 * confirmation, the fan-out to the enabled subscriptions of `DB` in the same batch (no enqueue).
 */
export async function storeIn(shard: ShardName, init: ShardEventInit): Promise<ShardEvent> {
  const db = database(shard);
  const eventId = init.eventId ?? (await eventIdIn(shard, 'evt_shard_'));
  const event: NewWebhookEvent = {
    eventId,
    eventType: init.eventType,
    receivedAt: init.receivedAt ?? Date.now(),
    reference: null,
    rawBody:
      init.rawBody ??
      JSON.stringify({ event_type: init.eventType, event_id: eventId, data: { id: 1 } }),
  };
  const status = init.status ?? 'received';
  const insert = await insertWebhookEventStatement(
    db,
    event,
    status,
    init.confirmation ?? UNCHECKED,
  );
  if (status === 'awaiting_confirmation') {
    await insert.run();
    return { eventId, deliveryIds: [] };
  }
  const view = await subscriptionsViewFor(database('DB'), { name: shard, db });
  const [, fanOut] = await db.batch<{ id: string }>([
    insert,
    fanOutDeliveriesStatement(db, event, view),
  ]);
  return { eventId, deliveryIds: (fanOut?.results ?? []).map((row) => row.id) };
}

/** The event `eventId` as `shard` holds it, or `undefined`. */
export async function eventIn(
  shard: ShardName,
  eventId: string,
): Promise<WebhookEventRecord | undefined> {
  return findWebhookEvent(database(shard), eventId);
}

/** The deliveries of `eventId` that `shard` holds, with their subscriptions and status. */
export async function deliveriesIn(shard: ShardName, eventId: string) {
  return (await listEventDeliveries(database(shard), eventId)).map((delivery) => ({
    id: delivery.id,
    subscriptionId: delivery.subscriptionId,
    status: delivery.status,
    nextAttemptAt: delivery.nextAttemptAt,
  }));
}

/** Bindings whose statements are counted, per binding name. */
export interface CountingBindings {
  /** The three databases, each counting every statement prepared on it. */
  readonly bindings: Record<ShardName, D1Database>;
  /** Statements prepared so far, per binding. */
  readonly statements: Record<ShardName, number>;
}

/**
 * The three real databases, each wrapped so that every `prepare` (one D1 statement, whether
 * run alone or in a batch) is counted under its binding name.
 */
export function countingBindings(): CountingBindings {
  const statements = { DB: 0, DB_SHARD_1: 0, DB_SHARD_2: 0 };
  const wrap = (name: ShardName): D1Database =>
    new Proxy(database(name), {
      get: (target, property) => {
        const value = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        if (property === 'prepare') {
          return (sql: string) => {
            statements[name] += 1;
            return Reflect.apply(value, target, [sql]);
          };
        }
        return value.bind(target);
      },
    });
  return {
    bindings: { DB: wrap('DB'), DB_SHARD_1: wrap('DB_SHARD_1'), DB_SHARD_2: wrap('DB_SHARD_2') },
    statements,
  };
}
