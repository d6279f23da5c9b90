/**
 * The merchant's service in the crash test: a loopback HTTP server that records the
 * `webhook-id` of every delivery and the status it answered. It can be down (answering
 * 503, as a service being deployed) and come back.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One delivery the subscriber got. */
interface SubscriberHit {
  /** The `webhook-id` header: the payment service's event id. */
  readonly eventId: string;
  /** What the subscriber answered. */
  readonly status: number;
}

/** A running subscriber. */
export interface CrashSubscriber {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  /** Answer 200 (`true`) or 503 (`false`) from now on. */
  setUp(up: boolean): void;
  /** Every delivery so far, oldest first. */
  hits(): readonly SubscriberHit[];
  /** The event ids it answered 200 to. */
  accepted(): Set<string>;
  close(): Promise<void>;
}

/**
 * Starts the subscriber on a free loopback port, down (503) until {@link CrashSubscriber.setUp}.
 *
 * @returns the running subscriber.
 */
export async function startCrashSubscriber(): Promise<CrashSubscriber> {
  const hits: SubscriberHit[] = [];
  let up = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = up ? 200 : 503;
      hits.push({ eventId: String(req.headers['webhook-id'] ?? ''), status });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(up ? 'ok' : 'deploying');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    setUp: (value) => {
      up = value;
    },
    hits: () => hits,
    accepted: () => new Set(hits.filter((hit) => hit.status === 200).map((hit) => hit.eventId)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
