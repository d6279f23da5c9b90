/**
 * A tiny local HTTP server that records the sandbox's webhook deliveries, for the
 * contract tests (the sandbox signs its webhooks with the merchant secret, like requests).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Json } from './sandbox-client.ts';

/** One webhook POST received by {@link startWebhookReceiver}. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** Exact bytes received, as UTF-8 text (what the signature covers). */
  raw: string;
  body: Json;
}

/** A local HTTP server that records webhook deliveries. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status code answered to deliveries. @default 200 */
  respondWith: number;
  /**
   * Resolves with the first delivery matching `predicate`, polling until `timeoutMs`;
   * calls `tick` (e.g. `sandbox.tick()`) between polls so pending webhooks flush.
   */
  waitFor(
    predicate: (hook: ReceivedWebhook) => boolean,
    options?: { timeoutMs?: number; tick?: () => Promise<void> },
  ): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

/** Starts a webhook receiver on 127.0.0.1 with a free port. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: Partial<WebhookReceiver> & { respondWith: number } = { respondWith: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Json;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ headers: req.headers, raw, body });
      res.writeHead(receiver.respondWith, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    waitFor: async (
      predicate: (hook: ReceivedWebhook) => boolean,
      { timeoutMs = 3_000, tick }: { timeoutMs?: number; tick?: () => Promise<void> } = {},
    ) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find(predicate);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) {
          throw new Error(
            `no matching webhook within ${timeoutMs} ms; received: ${received.map((h) => h.raw).join('\n')}`,
          );
        }
        if (tick !== undefined) await tick();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as WebhookReceiver;
}

/**
 * A predicate on a webhook, received (`ReceivedWebhook`) or recorded
 * (`GET /__sandbox/webhooks`), that matches when its `data[field]` is `value`.
 *
 * @example
 * ```ts
 * await hooks.waitFor(webhookWith('reference', reference), { tick: api.tick });
 * ```
 */
export function webhookWith(field: string, value: unknown): (hook: { body: Json }) => boolean {
  return (hook) => hook.body?.data?.[field] === value;
}
