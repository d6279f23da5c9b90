// Test controls of the timing faults and webhook retries (docs/sandbox.md, "Timing faults").
import * as v from 'valibot';
import { readControlBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';

/** Most retries a schedule may hold. */
const MAX_RETRIES = 20;
/** Longest delay before one retry: a day, in milliseconds. */
const MAX_RETRY_DELAY_MS = 86_400_000;

/** Body of `POST /__sandbox/webhooks/retries`. */
const RetriesControlSchema = v.strictObject({
  delays_ms: v.pipe(
    v.array(
      v.pipe(
        v.number('Expected milliseconds'),
        v.integer('Expected an integer'),
        v.minValue(0, 'Expected at least 0'),
        v.maxValue(MAX_RETRY_DELAY_MS, `Expected at most ${MAX_RETRY_DELAY_MS}`),
      ),
      'Expected an array of milliseconds',
    ),
    v.maxLength(MAX_RETRIES, `Expected at most ${MAX_RETRIES} retries`),
  ),
});

/**
 * `POST /__sandbox/webhooks/retries` `{ delays_ms }`: replaces the retry schedule of failed
 * webhook deliveries (real ms before each retry; `[]` = no retries). Deliveries already
 * waiting for a retry keep its time; their later retries follow the new schedule. Answers
 * `{ status, message, data: { delays_ms } }`.
 *
 * @throws 400 `validation_failed` naming `delays_ms`.
 */
export function setRetriesControl(ctx: SandboxRequestContext): Response {
  const body = readControlBody(ctx, RetriesControlSchema);
  ctx.core.state.webhookRetryDelaysMs = [...body.delays_ms];
  return retriesView(ctx, 'Webhook retry schedule set');
}

/** `GET /__sandbox/webhooks/retries`: `{ status, data: { delays_ms } }`, the current schedule. */
export function getRetriesControl(ctx: SandboxRequestContext): Response {
  return retriesView(ctx, 'Webhook retry schedule');
}

function retriesView(ctx: SandboxRequestContext, message: string): Response {
  return json({
    status: 'success',
    message,
    data: { delays_ms: ctx.core.state.webhookRetryDelaysMs },
  });
}

/**
 * `GET /__sandbox/idle`: answers once every timing window has closed: deferred commits
 * processed, `visible_after` and `webhook_early` lags over, `final_after` settlements and
 * held (`delay`) requests done, and the webhooks they sent delivered or failed (retries
 * are not waited for). `{ status, data: { now } }`. Lets a test over HTTP wait for a
 * window to close without sleeping.
 */
export async function idleControl(ctx: SandboxRequestContext): Promise<Response> {
  await ctx.core.timers.idle();
  await ctx.core.flush();
  return json({ status: 'success', message: 'Idle', data: { now: iso(ctx.core.now()) } });
}
