/**
 * The receipt of webhook events in Durable Objects (one of `EVENT_BUCKETS` by a hash of the
 * event id, ./buckets.ts): every copy of an event meets the others in one object, which
 * writes the event once and remembers where. Copies that arrive while the first is being
 * written wait for it; copies that arrive later find its record. So any number of copies,
 * from any isolate and across a change of shards, store the event once and fan it out once
 * (docs/architecture.md, "Webhook events received once"). Times are epoch milliseconds.
 */
import { DurableObject } from 'cloudflare:workers';
import {
  type EventPlacementNames,
  type EventWrite,
  type StoreOutcome,
  writeWebhookEvent,
} from '../relay/event-store.ts';
import { expiringRows, PurgeAlarm } from './purge-alarm.ts';

// One row per event: where it was written, and when its record may go (its retention over).
// WITHOUT ROWID and no index on forget_at: each write is one row; the alarm scans instead.
const SCHEMA = `CREATE TABLE IF NOT EXISTS received_events (
  event_id TEXT PRIMARY KEY,
  shard TEXT NOT NULL,
  forget_at INTEGER NOT NULL
) WITHOUT ROWID`;

/**
 * One bucket of received webhook events (wrangler.toml `WEBHOOK_EVENTS`, one object per
 * `eventBucketName`). Writes per event: its record (1 row) and its purge (1 row); the alarm
 * is set once per bucket and purge run.
 */
export class WebhookEvents extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  readonly #purge: PurgeAlarm;
  /** The writes under way, by event id: a copy arriving meanwhile waits for its outcome. */
  readonly #writing = new Map<string, Promise<StoreOutcome>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(SCHEMA);
    this.#purge = new PurgeAlarm(
      ctx.storage,
      expiringRows(this.#sql, {
        table: 'received_events',
        key: 'event_id',
        expiresAt: 'forget_at',
      }),
    );
  }

  /**
   * Receives one copy of an event: a copy of one being written waits for that write and is a
   * duplicate (or, when that write failed, is written in its place); a copy of one recorded
   * is a duplicate; else the event is written to D1 (worker/relay/event-store.ts) and
   * recorded here. The answer returns only once both are durable.
   *
   * @param write - the event and how it is stored.
   * @param placement - binding names of its home shard and of the others that may hold it.
   * @param forgetAt - epoch ms from which its record may be purged (its retention over).
   * @returns stored (the shard's name and the deliveries written), or a duplicate.
   * @throws whatever the D1 write throws: nothing is recorded, and the provider's retry
   *   writes it.
   */
  async receive(
    write: EventWrite,
    placement: EventPlacementNames,
    forgetAt: number,
  ): Promise<StoreOutcome> {
    const { eventId } = write.event;
    for (let first = this.#writing.get(eventId); first; first = this.#writing.get(eventId)) {
      try {
        return { kind: 'duplicate', shard: (await first).shard };
      } catch {
        // That copy failed (its provider got a 500): this one is written in its place.
      }
    }
    const recorded = this.#recorded(eventId);
    if (recorded !== undefined) return { kind: 'duplicate', shard: recorded };
    const writing = this.#write(write, placement, forgetAt);
    this.#writing.set(eventId, writing);
    try {
      return await writing;
    } finally {
      if (this.#writing.get(eventId) === writing) this.#writing.delete(eventId);
    }
  }

  /**
   * Where the event with this id was written, for the operator and the tests.
   *
   * @returns the shard's binding name, or `undefined` when there is no record.
   */
  find(eventId: string): string | undefined {
    return this.#recorded(eventId);
  }

  /** Deletes the records past their retention (worker/objects/purge-alarm.ts). */
  override async alarm(): Promise<void> {
    await this.#purge.run();
  }

  async #write(
    write: EventWrite,
    placement: EventPlacementNames,
    forgetAt: number,
  ): Promise<StoreOutcome> {
    const outcome = await writeWebhookEvent(this.env, placement, write);
    this.#sql.exec(
      'INSERT OR IGNORE INTO received_events (event_id, shard, forget_at) VALUES (?, ?, ?)',
      write.event.eventId,
      outcome.shard,
      forgetAt,
    );
    await this.#purge.by(forgetAt);
    return outcome;
  }

  #recorded(eventId: string): string | undefined {
    return this.#sql
      .exec<{ shard: string }>('SELECT shard FROM received_events WHERE event_id = ?', eventId)
      .toArray()[0]?.shard;
  }
}
