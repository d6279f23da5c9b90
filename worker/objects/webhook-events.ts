/**
 * While more than one generation of shards is kept, every copy of a webhook event meets the
 * others in one of these objects, which writes the event to D1 one copy at a time
 * (docs/architecture.md, "Webhook events received once").
 */
import { DurableObject } from 'cloudflare:workers';
import {
  type EventPlacementNames,
  type EventWrite,
  type StoreOutcome,
  writeWebhookEvent,
} from '../relay/event-store.ts';

/**
 * One bucket of received webhook events (wrangler.toml `WEBHOOK_EVENTS`, one object per
 * `eventBucketName`, ./buckets.ts). It stores nothing: D1 holds the events.
 */
export class WebhookEvents extends DurableObject<Env> {
  /** The writes under way, by event id: a copy arriving meanwhile waits for its outcome. */
  readonly #writing = new Map<string, Promise<StoreOutcome>>();

  /**
   * Receives one copy of an event: a copy of one being written waits for that write and is a
   * duplicate (or, when that write failed, is written in its place); any other copy is
   * written to D1 (worker/relay/event-store.ts), where an event already stored makes it a
   * duplicate. The answer returns only once the event is kept.
   *
   * @param write - the event and how it is stored.
   * @param placement - binding names of its home shard and of the others that may hold it.
   * @returns stored (the shard's name and the deliveries written), or a duplicate (where).
   * @throws whatever the D1 write throws: nothing is kept, and the provider's retry writes it.
   */
  async receive(write: EventWrite, placement: EventPlacementNames): Promise<StoreOutcome> {
    const { eventId } = write.event;
    for (let first = this.#writing.get(eventId); first; first = this.#writing.get(eventId)) {
      try {
        return { kind: 'duplicate', shard: (await first).shard };
      } catch {
        // That copy failed (its provider got a 500): this one is written in its place.
      }
    }
    const writing = writeWebhookEvent(this.env, placement, write);
    this.#writing.set(eventId, writing);
    try {
      return await writing;
    } finally {
      if (this.#writing.get(eventId) === writing) this.#writing.delete(eventId);
    }
  }
}
