// What the relay benchmarks share: subscribers in this process that record when each event
// first arrives, signed ingest of one event, admin calls, and the percentile of a latency.
import { createServer, type Server } from 'node:http';
import { BenchmarkError, HOST, onCleanup } from './lifecycle.ts';
import { signSync } from './sign-sync.ts';

const ADMIN = { Authorization: 'Bearer dev-admin-token', 'Content-Type': 'application/json' };
/** Longest wait for one request, in milliseconds. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The event type every benchmark event has: no upstream confirmation. */
export const EVENT_TYPE = 'mandate_activated';

/** A subscriber: records the first arrival of each event id, answers 204 or stalls. */
export interface Subscriber {
  readonly url: string;
  readonly arrivals: Map<string, number>;
  stall: boolean;
}

/** Starts a subscriber on `port` (127.0.0.1), closed when the run ends. */
export async function startSubscriber(port: number): Promise<Subscriber> {
  const subscriber: Subscriber = {
    url: `http://${HOST}:${port}/`,
    arrivals: new Map(),
    stall: false,
  };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const at = Date.now();
      const eventId = request.headers['webhook-id'];
      if (typeof eventId === 'string' && !subscriber.arrivals.has(eventId)) {
        subscriber.arrivals.set(eventId, at);
      }
      // A stalling subscriber never answers: the relay's timeout ends the request.
      if (!subscriber.stall) response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, resolve);
  });
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return subscriber;
}

/**
 * Ingests one signed event (`reference` as its `data.reference` when given); any answer but
 * 200 stops the benchmark.
 */
export async function ingest(gateway: string, eventId: string, reference?: string): Promise<void> {
  const body = JSON.stringify({
    event_type: EVENT_TYPE,
    event_id: eventId,
    timestamp: new Date().toISOString(),
    status: 'success',
    data: {
      mandate_reference: `mdt_${eventId}`,
      customer_email: 'bench@example.com',
      ...(reference === undefined ? {} : { reference }),
    },
  });
  const response = await fetch(`${gateway}/webhooks`, {
    method: 'POST',
    headers: { ...signSync(body), 'Content-Type': 'application/json' },
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await response.arrayBuffer();
  if (response.status !== 200) {
    throw new BenchmarkError(`ingest of ${eventId} answered ${response.status}: stopping`);
  }
}

/** An admin API call; anything but 2xx stops the benchmark. */
export async function admin(gateway: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${gateway}${path}`, {
    method,
    headers: ADMIN,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new BenchmarkError(`${method} ${path}: ${response.status} ${text}`);
  return text === '' ? {} : (JSON.parse(text) as { data?: { id?: string } });
}

/** Waits (every 100 ms, at most `deadlineMs`) until `subscriber` got every id of `ids`. */
export async function untilArrived(
  subscriber: Subscriber,
  ids: Iterable<string>,
  deadlineMs: number,
): Promise<void> {
  const wanted = [...ids];
  for (const deadline = Date.now() + deadlineMs; Date.now() < deadline; ) {
    if (wanted.every((id) => subscriber.arrivals.has(id))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The `p`th percentile (nearest rank) of `values`; 0 when empty. */
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
