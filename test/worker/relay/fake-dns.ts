/**
 * A fake network for the relay's DNS tests: a DNS-over-HTTPS resolver answering the JSON API
 * as Cloudflare's does (CNAME chains included), which also routes the test subscribers' host
 * names to the recording receiver of test/global-setup.ts over real HTTP. Nothing reaches a
 * real resolver.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { DELIVERIES_QUEUE, handleQueueBatch } from '../../../worker/relay/consumer.ts';
import { storeDelivery } from './delivery-helpers.ts';
import { prepareOutboxes, settleOutboxes } from './outbox-helpers.ts';

/** The fake resolver's URL, as `SUBSCRIBER_DNS_RESOLVER`. */
export const RESOLVER = 'https://doh.test/dns-query';
const TYPES = { A: 1, CNAME: 5, AAAA: 28 } as const;

/** What the fake resolver knows of one name. */
export interface ZoneEntry {
  readonly A?: readonly string[];
  readonly AAAA?: readonly string[];
  /** The name is an alias: its responses are the CNAME record, then the target's. */
  readonly cname?: string;
  /** A DNS status other than NOERROR (2 SERVFAIL, 5 REFUSED). */
  readonly status?: number;
  /** An HTTP failure of the resolver itself. */
  readonly http?: number;
  /** A 200 answer that is not DNS JSON. */
  readonly garbage?: true;
  /** The resolver cannot be reached. */
  readonly unreachable?: true;
  /** The resolver never answers (until the query's signal aborts). */
  readonly hang?: true;
  /**
   * What the name answers once a subscriber request went out: a rebinding name, or one
   * whose addresses moved during the attempt.
   */
  readonly after?: ZoneEntry;
}

/** A fake network: the DNS-over-HTTPS resolver, and subscriber hosts routed to the receiver. */
export interface FakeNetwork {
  readonly fetch: typeof fetch;
  /** `A name` / `AAAA name`, in order. */
  readonly queries: string[];
  /** URLs of the requests that went to a subscriber. */
  readonly subscriberRequests: string[];
}

export function fakeNetwork(zone: Readonly<Record<string, ZoneEntry>>): FakeNetwork {
  const queries: string[] = [];
  const subscriberRequests: string[] = [];
  const entryOf = (name: string): ZoneEntry | undefined => {
    const entry = zone[name];
    return subscriberRequests.length > 0 && entry?.after !== undefined ? entry.after : entry;
  };
  const answer = (name: string, type: 'A' | 'AAAA'): unknown[] => {
    const entry = entryOf(name);
    if (entry?.cname !== undefined) {
      const alias = { name, type: TYPES.CNAME, TTL: 300, data: `${entry.cname}.` };
      return [alias, ...answer(entry.cname, type)];
    }
    return (entry?.[type] ?? []).map((data) => ({ name, type: TYPES[type], TTL: 300, data }));
  };
  const resolve = async (url: URL, request: Request): Promise<Response> => {
    expect(request.headers.get('accept')).toBe('application/dns-json');
    const name = url.searchParams.get('name') ?? '';
    const type = url.searchParams.get('type') === 'AAAA' ? 'AAAA' : 'A';
    queries.push(`${type} ${name}`);
    const entry = entryOf(name);
    if (entry?.unreachable) throw new TypeError('Network connection lost.');
    if (entry?.hang) {
      // As fetch does: rejects with the signal's reason (a TimeoutError) once it aborts.
      await new Promise((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason)),
      );
    }
    if (entry?.http !== undefined) return new Response('unavailable', { status: entry.http });
    if (entry?.garbage) return new Response('<html>captive portal</html>', { status: 200 });
    const status = entry === undefined ? 3 : (entry.status ?? 0);
    return Response.json(
      {
        Status: status,
        TC: false,
        RD: true,
        RA: true,
        AD: false,
        CD: false,
        Question: [{ name: `${name}.`, type: TYPES[type] }],
        ...(status === 0 ? { Answer: answer(name, type) } : {}),
      },
      { headers: { 'content-type': 'application/dns-json' } },
    );
  };
  const network = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (`${url.origin}${url.pathname}` === RESOLVER) return resolve(url, request);
    subscriberRequests.push(request.url);
    // Every other host is a subscriber of these tests: the receiver answers for it.
    return fetch(`${inject('receiverUrl')}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: await request.text(),
      redirect: 'manual',
    });
  };
  return { fetch: network as typeof fetch, queries, subscriberRequests };
}

/** A unique host name under the reserved `.test` TLD. */
export const hostName = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}.test`;

/**
 * Stores a delivery to `<scheme>://<host>/hooks?key=…` and runs the real consumer on it,
 * and the subscription's outbox on what it hands over, through a fake network resolving `zone`; `overrides` are settings of the Worker, and
 * `status` what the subscriber answers (200 when not given).
 */
export async function deliverTo(
  host: string,
  zone: Record<string, ZoneEntry>,
  overrides: Partial<Env> = {},
  scheme = 'https',
  status?: number,
) {
  const key = crypto.randomUUID();
  const answer = status === undefined ? '' : `&status=${status}`;
  const stored = await storeDelivery({ url: `${scheme}://${host}/hooks?key=${key}${answer}` });
  const network = fakeNetwork(zone);
  const batch = createMessageBatch(DELIVERIES_QUEUE, [
    {
      id: 'msg-0',
      timestamp: new Date(),
      attempts: 1,
      body: { deliveryId: stored.deliveryId },
    },
  ]);
  const settings = { ALLOW_LOCAL_SUBSCRIBERS: '', SUBSCRIBER_DNS_RESOLVER: RESOLVER };
  const workerEnv = { ...env, ...settings, ...overrides };
  // The outbox makes the attempt: it gets the settings and the fake network.
  const outboxes = await prepareOutboxes(batch.messages, workerEnv, network.fetch);
  await handleQueueBatch(batch, workerEnv);
  const result = await settleOutboxes(
    outboxes,
    await getQueueResult(batch, createExecutionContext()),
  );
  return { stored, key, network, result };
}
