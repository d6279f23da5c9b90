/**
 * One shard growing to three in the middle of webhook traffic, through the real ingress on
 * the real D1 databases: waves of concurrent copies of the same events straddle the start of
 * the new generation (1.5 s after the test starts). Every event ends stored once, in one
 * shard, with one delivery per subscription, enqueued once, and every copy answers 200
 * (stored or duplicate): the copies meet in the event's own object, whatever generation
 * their isolate places them in.
 */
import { describe, expect, it } from 'vitest';
import { useCapturedLogs } from '../helpers.ts';
import { createReceiverSubscription, disableTestSubscriptions } from '../relay/delivery-helpers.ts';
import { SHARDS } from '../shard-databases.ts';
import { deliveriesIn, holdersOf, type Ingested, ingest } from './event-shard-helpers.ts';

useCapturedLogs();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook events while one shard grows to three', () => {
  it('should store and enqueue every event once across the change, answering every copy 200', async () => {
    const type = `test_${crypto.randomUUID()}`;
    const sub = await createReceiverSubscription({ eventTypes: [type] });
    const start = Date.now() + 1_500;
    const shards = `DB; ${new Date(start).toISOString()}=${SHARDS.join(',')}`;
    const ids = Array.from({ length: 16 }, () => `evt_${crypto.randomUUID()}`);
    const answers = new Map<string, Ingested[]>(ids.map((id) => [id, []]));
    const post = async (id: string) => {
      const answer = await ingest(shards, id, type);
      answers.get(id)?.push(answer);
      return answer;
    };

    // Waves every 250 ms from 1.5 s before the start to 1.5 s after: in each, three
    // concurrent copies of four of the events, each event in several waves.
    for (let wave = 0; wave < 12; wave += 1) {
      const batch = ids.filter((_, index) => (index + wave) % 4 === 0);
      await Promise.all(batch.flatMap((id) => [post(id), post(id), post(id)]));
      await sleep(250);
    }
    expect(Date.now()).toBeGreaterThan(start);

    for (const id of ids) {
      const seen = answers.get(id) ?? [];
      expect(seen.map((answer) => answer.status)).toEqual(seen.map(() => 200));
      const holders = await holdersOf(id);
      expect(holders).toHaveLength(1);
      const [holder] = holders;
      const deliveries = await deliveriesIn(holder ?? 'DB', id);
      expect(deliveries.map((d) => d.subscription_id)).toEqual([sub.subscription.id]);
      // Exactly one answer stored it and enqueued its delivery; every other was a copy.
      const stored = seen.filter((answer) => answer.status === 200 && !answer.body.duplicate);
      expect(stored).toHaveLength(1);
      expect(seen.flatMap((answer) => answer.messages).map((m) => m.deliveryId)).toEqual([
        deliveries[0]?.id,
      ]);
    }
    await disableTestSubscriptions();
  }, 20_000);
});
