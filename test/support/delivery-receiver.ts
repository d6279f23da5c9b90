/**
 * A recording HTTP receiver for the relay's delivery tests, started by
 * test/global-setup.ts on 127.0.0.1 and reached from workerd over real HTTP.
 *
 * - `POST /<any>?key=K[&status=N][&retry_after=V]`: recorded under `K`; answers the
 *   status set for `K` with `PUT /__status`, else `status` (default 200), with
 *   `Retry-After: V` when given, and a body naming the status.
 * - `PUT /__status?key=K&status=N`: every later request under `K` answers `N`
 *   (a subscriber going down or coming back).
 * - `PUT /__hold?key=K`: later requests under `K` are recorded but not answered (a stalled
 *   subscriber) until `PUT /__release?key=K` answers them all.
 * - `GET /__received?key=K`: `{ data: [{ method, url, headers, body }] }`, oldest first.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
interface ReceivedDelivery {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The exact body, as UTF-8 text (what the signature covers). */
  body: string;
}

/** A running receiver. */
export interface DeliveryReceiver {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/** Starts the receiver on a free loopback port. */
export async function startDeliveryReceiver(): Promise<DeliveryReceiver> {
  const received = new Map<string, ReceivedDelivery[]>();
  const statusOverrides = new Map<string, number>();
  const holding = new Set<string>();
  const held = new Map<string, (() => void)[]>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://receiver.test');
    const key = url.searchParams.get('key') ?? '';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/__received') return json(200, { data: received.get(key) ?? [] });
      if (url.pathname === '/__status') {
        statusOverrides.set(key, Number(url.searchParams.get('status')));
        return json(200, { ok: true });
      }
      if (url.pathname === '/__hold') {
        holding.add(key);
        return json(200, { ok: true });
      }
      if (url.pathname === '/__release') {
        holding.delete(key);
        const answers = held.get(key) ?? [];
        held.delete(key);
        for (const answer of answers) answer();
        return json(200, { released: answers.length });
      }
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.set(key, [...(received.get(key) ?? []), entry]);
      const status = statusOverrides.get(key) ?? Number(url.searchParams.get('status') ?? 200);
      const retryAfter = url.searchParams.get('retry_after');
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (retryAfter !== null) headers['retry-after'] = retryAfter;
      if (status >= 300 && status < 400) headers.location = 'http://127.0.0.1:1/elsewhere';
      const answer = () => {
        res.writeHead(status, headers);
        res.end(`${url.searchParams.get('body_prefix') ?? ''}answered ${status}`);
      };
      if (holding.has(key)) held.set(key, [...(held.get(key) ?? []), answer]);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
