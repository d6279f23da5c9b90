// The example internal service of `npm start`, the relay as a subscriber sees it: receives
// the gateway's webhook deliveries, verifies each with the `standardwebhooks` package and
// prints it.
//
//   node examples/receiver/server.ts whsec_...        (or EDGEPAY_RECEIVER_SECRET=whsec_...)
//   EDGEPAY_RECEIVER_PORT=8789 (default; 0 picks a free port), always on 127.0.0.1
//
// Verified delivery -> one printed line and 204. A webhook-id seen before -> 204, not handled
// again. Bad or missing signature, or a timestamp more than 5 minutes away (the library's
// tolerance) -> a warning and 401. receiver.py and main.go beside it do the same in Python
// and Go with their standard libraries.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** The largest body read, in bytes; larger deliveries are answered 413. */
const MAX_BODY_BYTES = 1024 * 1024;
/**
 * How many webhook-ids are remembered for deduplication (a real service keeps them in its
 * database, written in the same transaction as what the event changes).
 */
const REMEMBERED_IDS = 10_000;

/** What the receiver reports of a verified delivery. */
export interface ReceivedEvent {
  /** The `webhook-id` header (the gateway's delivery message id). */
  webhookId: string;
  /** The envelope's `event_type`, e.g. `charge_success`. */
  eventType: string;
  /** The envelope's `event_id`. */
  eventId: string;
  /** `data.reference`, when the event has one. */
  reference: string | undefined;
  /** The whole parsed envelope. */
  payload: unknown;
}

export interface ReceiverOptions {
  /** The subscription's `whsec_...` secret (as created or rotated through the admin API). */
  secret: string;
  port?: number;
  host?: string;
  /** Called for each verified delivery; the default prints one line. */
  onEvent?: (event: ReceivedEvent) => void;
  /** Called for each rejected delivery; the default prints a warning. */
  onRejected?: (reason: string) => void;
}

export interface Receiver {
  /** e.g. `http://127.0.0.1:8789/`. */
  url: string;
  close: () => Promise<void>;
}

/** The line printed for a verified delivery (also what the e2e test looks for). */
export function describeEvent(event: ReceivedEvent): string {
  return `receiver: verified ${event.eventType} ${event.eventId} reference=${event.reference ?? '-'}`;
}

/**
 * Starts the receiver.
 *
 * @example
 * ```ts
 * const receiver = await startReceiver({ secret, port: 8789 });
 * // ... later
 * await receiver.close();
 * ```
 */
export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const webhook = new Webhook(options.secret);
  const seen = new Set<string>();
  const onEvent = options.onEvent ?? ((event) => console.log(describeEvent(event)));
  const onRejected =
    options.onRejected ?? ((reason) => console.warn(`receiver: rejected a delivery: ${reason}`));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (request.method !== 'POST') return void response.writeHead(405).end();
      if (size > MAX_BODY_BYTES) return void response.writeHead(413).end();
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let payload: unknown;
      try {
        payload = webhook.verify(rawBody, headersOf(request.headers));
      } catch (error) {
        onRejected(error instanceof Error ? error.message : String(error));
        return void response.writeHead(401).end();
      }
      const webhookId = String(request.headers['webhook-id'] ?? '');
      // At least once: a retry or an admin replay carries the same webhook-id.
      if (!remember(seen, webhookId)) {
        console.log(`receiver: duplicate ${webhookId}, already handled`);
        return void response.writeHead(204).end();
      }
      // Answer fast (the gateway waits 15 s at most): hand slow work to a queue.
      onEvent(toEvent(webhookId, payload));
      response.writeHead(204).end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8789, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Adds `id` to `seen` (dropping the oldest past {@link REMEMBERED_IDS}); false when known. */
function remember(seen: Set<string>, id: string): boolean {
  if (seen.has(id)) return false;
  seen.add(id);
  if (seen.size > REMEMBERED_IDS) {
    const oldest = seen.values().next().value;
    if (oldest !== undefined) seen.delete(oldest);
  }
  return true;
}

/** The Standard Webhooks headers as the library wants them (single string values). */
function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function toEvent(webhookId: string, payload: unknown): ReceivedEvent {
  const envelope = (typeof payload === 'object' && payload !== null ? payload : {}) as {
    event_type?: unknown;
    event_id?: unknown;
    data?: { reference?: unknown };
  };
  const reference = envelope.data?.reference;
  return {
    webhookId,
    eventType: String(envelope.event_type ?? '?'),
    eventId: String(envelope.event_id ?? '?'),
    reference: typeof reference === 'string' ? reference : undefined,
    payload,
  };
}

// Run directly: `node examples/receiver/server.ts [secret]`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.argv[2] ?? process.env.EDGEPAY_RECEIVER_SECRET;
  if (secret === undefined || secret === '') {
    console.error(
      'usage: node examples/receiver/server.ts <whsec_...> (or EDGEPAY_RECEIVER_SECRET)',
    );
    process.exit(2);
  }
  const receiver = await startReceiver({
    secret,
    port: Number(process.env.EDGEPAY_RECEIVER_PORT ?? 8789),
  });
  console.log(`receiver: listening on ${receiver.url}`);
  process.on('SIGINT', () => void receiver.close().then(() => process.exit(0)));
}
