/**
 * The DELIVERIES queue as wrangler.toml wires it: an event ingested
 * with the real producer reaches the Worker's own `queue` handler through miniflare's
 * queue, within `max_batch_timeout`. The test bindings keep ALLOW_LOCAL_SUBSCRIBERS off,
 * so the loopback receiver is refused: the recorded attempt shows the consumer ran.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../../worker/db/deliveries.ts';
import { listDeliveryAttempts } from '../../../worker/db/delivery-attempts.ts';
import { fetchGateway } from '../helpers.ts';
import { envelope, webhookRequest } from '../routes/webhook-helpers.ts';
import { createReceiverSubscription } from './delivery-helpers.ts';

describe('DELIVERIES queue', () => {
  it('should carry an ingested delivery to the queue handler', async () => {
    const eventType = `wiring_${crypto.randomUUID()}`;
    const { subscription } = await createReceiverSubscription({ eventTypes: [eventType] });
    const event = envelope({ event_type: eventType });
    const res = await fetchGateway(await webhookRequest(JSON.stringify(event)));
    expect(res.status).toBe(200);
    const [delivery] = (await listEventDeliveries(env.DB, String(event.event_id))).filter(
      (d) => d.subscriptionId === subscription.id,
    );
    if (delivery === undefined) throw new Error('no delivery written');
    await expect
      .poll(async () => listDeliveryAttempts(env.DB, delivery.id), { timeout: 5000, interval: 100 })
      .toMatchObject([{ attempt: 1, status: null, error: expect.stringContaining('URL refused') }]);
  });
});
