import { runScheduled } from './cron.ts';
import { handleQueueBatch } from './relay/consumer.ts';
import { createRouter } from './router.ts';

/** The idempotency keys' Durable Object (wrangler.toml `IDEMPOTENCY_KEYS`). */
export { IdempotencyKeys } from './objects/idempotency-keys.ts';
/** The webhook events' receipt Durable Object (wrangler.toml `WEBHOOK_EVENTS`). */
export { WebhookEvents } from './objects/webhook-events.ts';
/** The per-caller rate limiter Durable Object (wrangler.toml `RATE_LIMITER`). */
export { CallerRateLimiter } from './rate-limit/caller-rate-limiter.ts';
/** The relay's outbox per subscription Durable Object (wrangler.toml `SUBSCRIBER_OUTBOX`). */
export { SubscriberOutbox } from './relay/subscriber-outbox.ts';

const router = createRouter();

/**
 * The edgepay gateway Worker: see `createRouter` for the stages and routes;
 * `queue` consumes the relay's deliveries and their dead letters (worker/relay/consumer.ts).
 */
export default {
  fetch: (request, env, ctx) => router.fetch(request, env, ctx),
  scheduled: (controller, env, ctx) => ctx.waitUntil(runScheduled(controller, env)),
  queue: (batch, env, _ctx) => handleQueueBatch(batch, env),
} satisfies ExportedHandler<Env>;
