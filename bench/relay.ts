// Webhook relay, under `wrangler dev`, with load from this second process (autocannon):
// (1) ingest throughput of POST /webhooks with unique signed events against a Worker that
// answers 200 and writes the same access-log line (the floor), 10 connections,
// DURATION_SEC after WARMUP_SEC, ROUNDS rounds with the order rotated, medians, and the same
// POST to a second gateway whose events are spread over three local D1 databases (b3; after
// the load, a check that every database stored some of them); (2) a
// duplicate storm: STORM_EVENTS unique events, each sent 3 times concurrently; (3) the time
// from ingest to the first delivery attempt at examples/receiver, over 100 events.
// Run: npm run bench -- relay   (DURATION_SEC, WARMUP_SEC, ROUNDS, STORM_EVENTS to change;
//      THREE_SHARDS=false leaves (b3) and its gateway out, to compare (a) and (b) with a run
//      of code that had no (b3))
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startReceiver } from '../examples/receiver/server.ts';
import { root, startRelayGateway, startWorker } from './harness.ts';
import { assertPortsFree, BenchmarkError, HOST, onCleanup, runBenchmark } from './lifecycle.ts';
import {
  compareCases,
  describePlan,
  type LoadResult,
  median,
  printComparison,
  runLoad,
} from './load.ts';
import { EVENT_TYPE, percentile } from './relay-subscribers.ts';
import { assertRowsSpread, startShardedGateway } from './sharded-gateway.ts';
import { assertSignSyncMatchesSdk, signSync } from './sign-sync.ts';

// 197xx/198xx: apart from `npm start` (8787-8789) and the e2e test (187xx).
const SANDBOX_PORT = 19888;
const GATEWAY = { port: 19787, inspectorPort: 19887 };
const FLOOR = { port: 19790, inspectorPort: 19890 };
const SHARDED_GATEWAY = { port: 19791, inspectorPort: 19891 };
const STORM_EVENTS = Number(process.env.STORM_EVENTS ?? 200);
const LATENCY_EVENTS = 100;
const SHARDED_CASE = '(b3) relay POST /webhooks, 3 shards';
const THREE_SHARDS = process.env.THREE_SHARDS !== 'false';
const ADMIN = { Authorization: 'Bearer dev-admin-token', 'Content-Type': 'application/json' };
/** Longest wait for one request outside the load runs, in milliseconds. */
const REQUEST_TIMEOUT_MS = 10_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

let counter = 0;
const nextEventId = (tag: string) => `evt_bench_${process.pid}_${tag}_${counter++}`;

const envelope = (eventId: string) =>
  JSON.stringify({
    event_type: EVENT_TYPE,
    event_id: eventId,
    timestamp: new Date().toISOString(),
    status: 'success',
    data: { mandate_reference: `mdt_${eventId}`, customer_email: 'bench@example.com' },
  });

interface Signed {
  body: string;
  headers: Record<string, string>;
}

/**
 * A new event signed as the payment service signs webhooks (WEBHOOK_SECRET in
 * `.dev.vars.example` is the merchant secret). Synchronous, so the load runs sign each
 * request as it is sent and can never run out of signed events.
 */
function signedEvent(eventId: string): Signed {
  const body = envelope(eventId);
  return { body, headers: { ...signSync(body), 'Content-Type': 'application/json' } };
}

function load(name: string, url: string, seconds: number): Promise<LoadResult> {
  return runLoad(
    name,
    {
      url,
      method: 'POST',
      requests: [
        {
          setupRequest: (request) => {
            const event = signedEvent(nextEventId('load'));
            return {
              ...request,
              headers: { ...request.headers, ...event.headers },
              body: event.body,
            };
          },
        },
      ],
    },
    seconds,
  );
}

async function post(url: string, event: Signed): Promise<{ status: number; duplicate: boolean }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: event.headers,
    body: event.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const json = (await response.json().catch(() => ({}))) as { duplicate?: unknown };
  return { status: response.status, duplicate: json.duplicate === true };
}

/** Counts stored events whose id starts with `prefix`, received at or after `from`. */
async function countStored(gateway: string, prefix: string, from: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  // Bounded: 100 pages of 100 are 50 times the storm's rows.
  for (let pages = 0; pages < 100; pages++) {
    const query = new URLSearchParams({ event_type: EVENT_TYPE, from, page_size: '100' });
    if (cursor !== null) query.set('cursor', cursor);
    const response = await fetch(`${gateway}/admin/events?${query}`, {
      headers: ADMIN,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`admin events: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as {
      data: { event_id: string }[];
      next_cursor: string | null;
    };
    count += page.data.filter((e) => e.event_id.startsWith(prefix)).length;
    cursor = page.next_cursor;
    if (cursor === null) return count;
  }
  throw new Error('admin events: more than 100 pages');
}

await runBenchmark(async () => {
  await assertPortsFree([
    SANDBOX_PORT,
    GATEWAY.port,
    GATEWAY.inspectorPort,
    FLOOR.port,
    FLOOR.inspectorPort,
    SHARDED_GATEWAY.port,
    SHARDED_GATEWAY.inspectorPort,
  ]);
  await assertSignSyncMatchesSdk();
  // The ingress throughput is what is measured: the gateway runs with no per-address limit.
  const { url: gateway, state } = await startRelayGateway(
    SANDBOX_PORT,
    GATEWAY,
    'edgepay-bench-relay-',
  );
  await startWorker(
    ['-c', join(root, 'bench', 'ok-worker', 'wrangler.toml')],
    FLOOR,
    join(state, 'floor'),
  );
  // After the plain gateway, whose wrangler dev has built the console's assets; the same
  // settings as the plain gateway (startRelayGateway's).
  const sharded = THREE_SHARDS
    ? await startShardedGateway(
        join(state, 'shards'),
        [
          '--env-file',
          join(root, '.dev.vars.example'),
          '--var',
          `UPSTREAM_BASE_URL:http://${HOST}:${SANDBOX_PORT}`,
          '--var',
          'ALLOW_LOCAL_SUBSCRIBERS:true',
          '--var',
          'WEBHOOK_RATE_LIMIT_PER_MINUTE:0',
        ],
        SHARDED_GATEWAY,
      )
    : undefined;
  const shardedGateway = `http://${HOST}:${SHARDED_GATEWAY.port}`;
  for (const url of sharded === undefined ? [gateway] : [gateway, shardedGateway]) {
    const probe = await post(`${url}/webhooks`, signedEvent(nextEventId('probe')));
    if (probe.status !== 200) throw new Error(`probe ingest at ${url} failed: ${probe.status}`);
  }

  // (1) Throughput, before any subscription exists (ingest = verify, validate, store).
  const cases: Record<string, string> = {
    '(a) Worker answering 200 + access-log line': `http://${HOST}:${FLOOR.port}/webhooks`,
    '(b) relay POST /webhooks': `${gateway}/webhooks`,
    ...(sharded === undefined ? {} : { [SHARDED_CASE]: `${shardedGateway}/webhooks` }),
  };
  const summary = await compareCases(
    Object.fromEntries(
      Object.entries(cases).map(([name, url]) => [
        name,
        (seconds: number) => load(name, url, seconds),
      ]),
    ),
  );

  if (sharded !== undefined) {
    await assertRowsSpread(
      sharded,
      'webhook_events',
      { name: '(b3)', rows: 'webhook events' },
      summary[SHARDED_CASE]?.answered ?? 0,
    );
  }

  // (2) Duplicate storm: every event sent 3 times at once, all events concurrently.
  const stormFrom = new Date(Date.now() - 1000).toISOString();
  const stormPrefix = `evt_bench_${process.pid}_storm_`;
  const stormEvents = Array.from({ length: STORM_EVENTS }, () => signedEvent(nextEventId('storm')));
  const answers = (
    await Promise.all(
      stormEvents.map((event) =>
        Promise.all([0, 1, 2].map(() => post(`${gateway}/webhooks`, event))),
      ),
    )
  ).flat();
  const stormNon200 = answers.filter((a) => a.status !== 200);
  if (stormNon200.length > 0) {
    const statuses = new Map<number, number>();
    for (const { status } of stormNon200) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const counts = [...statuses].map(([status, count]) => `${count} x ${status}`).join(', ');
    throw new BenchmarkError(
      `duplicate storm: ${stormNon200.length} of ${answers.length} answers not 200 (${counts}): stopping`,
    );
  }
  const duplicates = answers.filter((a) => a.duplicate).length;
  const stored = await countStored(gateway, stormPrefix, stormFrom);

  // (3) Ingest to first delivery attempt, through a subscription to examples/receiver.
  const port = await freePort();
  const created = await fetch(`${gateway}/admin/subscriptions`, {
    method: 'POST',
    headers: ADMIN,
    body: JSON.stringify({
      url: `http://${HOST}:${port}/`,
      event_types: [EVENT_TYPE],
      description: 'bench/relay.ts',
    }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (created.status !== 201)
    throw new Error(`subscription: ${created.status} ${await created.text()}`);
  const { data } = (await created.json()) as { data: { secret: string } };
  const arrivals = new Map<string, number>();
  let rejected = 0;
  const receiver = await startReceiver({
    secret: data.secret,
    port,
    onEvent: (event) => {
      if (!arrivals.has(event.eventId)) arrivals.set(event.eventId, Date.now());
    },
    onRejected: () => rejected++,
  });
  onCleanup(() => receiver.close());
  const sent = new Map<string, number>();
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const eventId = nextEventId('latency');
    const event = signedEvent(eventId);
    sent.set(eventId, Date.now());
    const answer = await post(`${gateway}/webhooks`, event);
    if (answer.status !== 200) throw new Error(`latency ingest failed: ${answer.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const deadline = Date.now() + 30_000;
  while (arrivals.size < LATENCY_EVENTS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const latencies = [...sent].flatMap(([id, at]) => {
    const arrived = arrivals.get(id);
    return arrived === undefined ? [] : [arrived - at];
  });

  // Report.
  printComparison(summary);
  const [a, b, b3] = Object.values(summary);
  if (a !== undefined && b !== undefined) {
    console.log(
      `\nb/a req/s = ${(b.rps / a.rps).toFixed(2)}, b p99 / a p99 = ${(b.p99 / a.p99).toFixed(2)}`,
    );
  }
  if (b !== undefined && b3 !== undefined) {
    console.log(
      `b3/b req/s = ${(b3.rps / b.rps).toFixed(3)}, b3 p99 / b p99 = ${(b3.p99 / b.p99).toFixed(2)}`,
    );
  }
  console.log(describePlan());
  console.log('\n| measure | value |');
  console.log('|---|---|');
  console.log(
    `| duplicate storm: ${STORM_EVENTS} events x 3 concurrent | ${duplicates} of ${2 * STORM_EVENTS} duplicates dropped (${((100 * duplicates) / (2 * STORM_EVENTS)).toFixed(1)}%, target 100%), 0 non-200, ${stored} rows stored (want ${STORM_EVENTS}) |`,
  );
  console.log(
    `| ingest -> first delivery attempt, ${LATENCY_EVENTS} events | median ${median(latencies)} ms, p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms (target <= 1100 ms); ${latencies.length}/${LATENCY_EVENTS} arrived, ${rejected} rejected |`,
  );
  console.log(`\n${new Date().toISOString()}, Node ${process.version}, every load answer 2xx`);
});
