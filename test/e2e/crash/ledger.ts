/**
 * What the payment service (the sandbox) and the merchant's service (the subscriber) saw
 * at the end of the crash test, read over the sandbox's test controls: POSTs per reference,
 * records, balance, webhooks and whether each reached the subscriber.
 */
import type { MoneyRequest } from './traffic.ts';

/** The sandbox's request log keeps this many entries (lib/testing/request-log.ts). */
const REQUEST_LOG_LIMIT = 500;

interface LoggedRequest {
  method: string;
  path: string;
  body: string;
}

interface SandboxWebhook {
  event_id: string;
  event_type: string;
  delivery: 'pending' | 'delivered' | 'failed' | 'no_target';
  attempts?: number;
}

/** How many money POSTs of each reference reached the sandbox. */
export async function upstreamPosts(
  sandboxUrl: string,
  requests: readonly MoneyRequest[],
): Promise<Map<string, number>> {
  const response = await fetch(`${sandboxUrl}/__sandbox/requests`);
  const log = ((await response.json()) as { data: LoggedRequest[] }).data;
  if (log.length >= REQUEST_LOG_LIMIT) {
    throw new Error('the sandbox request log is full: POSTs per reference cannot be counted');
  }
  const paths = new Set(requests.map((request) => request.path));
  const posts = new Map(requests.map((request) => [request.reference, 0]));
  for (const entry of log) {
    if (entry.method !== 'POST' || !paths.has(entry.path)) continue;
    const reference = (JSON.parse(entry.body) as { reference?: string }).reference ?? '';
    if (posts.has(reference)) posts.set(reference, (posts.get(reference) ?? 0) + 1);
  }
  return posts;
}

/** The sandbox's balance (major units) and record counts. */
export async function sandboxState(
  sandboxUrl: string,
): Promise<{ balance: number; counts: { payments: number; transfers: number } }> {
  const response = await fetch(`${sandboxUrl}/__sandbox/state`);
  return (await response.json()) as {
    balance: number;
    counts: { payments: number; transfers: number };
  };
}

/** The sandbox's webhooks, oldest first. */
async function sandboxWebhooks(sandboxUrl: string): Promise<SandboxWebhook[]> {
  const response = await fetch(`${sandboxUrl}/__sandbox/webhooks`);
  return ((await response.json()) as { data: SandboxWebhook[] }).data;
}

/**
 * Waits until the sandbox has sent at least `expected` webhooks and none is `pending`
 * (each delivered, or its retries spent).
 *
 * @param sandboxUrl - the sandbox.
 * @param expected - how many webhooks the test's payments and transfers must emit.
 * @param timeoutMs - the longest wait, in milliseconds.
 * @returns the webhooks then.
 * @throws {Error} when fewer exist or some are still pending after `timeoutMs`.
 */
export async function webhooksSettled(
  sandboxUrl: string,
  expected: number,
  timeoutMs: number,
): Promise<SandboxWebhook[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const webhooks = await sandboxWebhooks(sandboxUrl);
    const pending = webhooks.filter((webhook) => webhook.delivery === 'pending');
    if (pending.length === 0 && webhooks.length >= expected) return webhooks;
    if (Date.now() > deadline) {
      throw new Error(
        `sandbox webhooks after ${timeoutMs} ms: ${webhooks.length} of ${expected}, ${pending.length} pending`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * How many deliveries the relay sweeper re-enqueued, from the gateway's log lines
 * (`{"event":"relay_swept","requeued":N,...}`).
 *
 * @param output - what the gateway printed.
 */
export function sweptRequeued(output: string): number {
  let requeued = 0;
  for (const line of output.split('\n')) {
    const start = line.indexOf('{"level"');
    if (start < 0 || !line.includes('"relay_swept"')) continue;
    requeued += (JSON.parse(line.slice(start)) as { requeued?: number }).requeued ?? 0;
  }
  return requeued;
}

/** Amounts in minor units (the checks never sum floats). */
export function minor(amount: number | string): number {
  return Math.round(Number(amount) * 100);
}
