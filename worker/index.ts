import { runScheduled } from './cron.ts';
import { createRouter } from './router.ts';

/** The per-caller rate limiter Durable Object (wrangler.toml `RATE_LIMITER`). */
export { CallerRateLimiter } from './rate-limit/caller-rate-limiter.ts';

const router = createRouter();

/** The edgepay gateway Worker (DESIGN 4): see `createRouter` for the stages and routes. */
export default {
  fetch: (request, env, ctx) => router.fetch(request, env, ctx),
  scheduled: (controller, env, ctx) => ctx.waitUntil(runScheduled(controller, env)),
} satisfies ExportedHandler<Env>;
