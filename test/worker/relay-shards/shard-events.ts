/**
 * Helpers of the relay's housekeeping tests over three event shards (`DB`, `DB_SHARD_1`,
 * `DB_SHARD_2`, bound by test/support/worker-test-options.ts): event ids picked by the
 * placement rule for a chosen shard, events stored there as the ingress stores them (their
 * fan-out reading the subscriptions of `DB`), what a shard holds, and D1 bindings that count
 * the statements prepared on them.
 */
import { env } from 'cloudflare:workers';
import { loadSettings } from '../../../worker/config.ts';
import { fanOutDeliveriesStatement, listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { placeEvent } from '../../../worker/db/event-shards.ts';
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

/** The test databases, in placement order. */
export const SHARDS = ['DB', 'DB_SHARD_1', 'DB_SHARD_2'] as const;

/** One of {@link SHARDS}. */
export type ShardName = (typeof SHARDS)[number];

/** The setting that spreads events over the three test databases. */
export const THREE_SHARDS = { D1_SHARDS: SHARDS.join(',') } as Partial<Env>;

/** The test's database bound as `name`. */
function database(name: ShardName): D1Database {
  return env[name];
}

/**
 * A fresh id of the form `<prefix><uuid>` whose event placement with three shards is `shard`
 * (at most 200 draws; each lands on a given shard one time in three).
 *
 * @param prefix - what the id starts with; the part placed is the whole id.
 */
export async function idPlacedIn(shard: ShardName, prefix = 'evt_shard_'): Promise<string> {
  const loaded = loadSettings({ ...env, ...THREE_SHARDS });
  if (!loaded.ok) throw new Error('the three-shard settings are invalid');
  for (let draw = 0; draw < 200; draw++) {
    const id = `${prefix}${crypto.randomUUID()}`;
    const { home } = await placeEvent(env, loaded.settings, id, Date.now());
    if (home.name === shard) return id;
  }
  throw new Error(`no id placed in ${shard} after 200 draws`);
}

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
  const eventId = init.eventId ?? (await idPlacedIn(shard));
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
  const view = await subscriptionsViewFor(env.DB, { name: shard, db });
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
