// Webhook relay (issue 5, "Measured"). Under `wrangler dev`, with load from this second
// process (autocannon): (1) ingest throughput of POST /webhooks with unique signed events
// against a bare Worker that only answers 200 (the floor), 10 connections, DURATION_SEC
// after WARMUP_SEC, ROUNDS rounds with the order rotated, medians; (2) a duplicate storm:
// STORM_EVENTS unique events, each sent 3 times concurrently; (3) the time from ingest to
// the first delivery attempt at examples/receiver, over 100 events.
// Run: node bench/relay.ts   (DURATION_SEC, WARMUP_SEC, ROUNDS, STORM_EVENTS to change)
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReceiver } from '../examples/receiver/server.ts';
import { signRequest } from '../lib/signing.ts';
import { startSandboxServer } from '../scripts/sandbox-server.ts';
import {
  compareCases,
  HOST,
  LOAD_PLAN,
  type LoadResult,
  median,
  migrate,
  printComparison,
  root,
  runLoad,
  startWorker,
} from './harness.ts';

// 197xx/198xx: apart from the e2e test's 187xx, so a benchmark never collides with npm test.
const SANDBOX_PORT = 19888;
const GATEWAY_PORT = 19787;
const FLOOR_PORT = 19790;
const STORM_EVENTS = Number(process.env.STORM_EVENTS ?? 200);
const LATENCY_EVENTS = 100;
const KEY_ID = 'sandbox-key';
/** WEBHOOK_SECRET in .dev.vars.example. */
const SECRET = 'sandbox-secret';
const ADMIN = { Authorization: 'Bearer dev-admin-token', 'Content-Type': 'application/json' };
const EVENT_TYPE = 'mandate_activated';

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

async function signedEvent(eventId: string): Promise<Signed> {
  const body = envelope(eventId);
  const signature = await signRequest({ keyId: KEY_ID, secret: SECRET, body });
  return { body, headers: { ...signature, 'Content-Type': 'application/json' } };
}

// autocannon's setupRequest is synchronous, so each load run draws from a pool signed
// beforehand with signRequest; if a run outgrows it, the same scheme is signed with
// node:crypto (checked against signRequest at start-up) and counted.
let fallbackSigned = 0;
function signedEventSync(eventId: string): Signed {
  const body = envelope(eventId);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', SECRET).update(`${timestamp}:${body}`).digest('hex');
  return {
    body,
    headers: {
      'X-Key-Id': KEY_ID,
      'X-Timestamp': timestamp,
      'X-Signature': signature,
      'Content-Type': 'application/json',
    },
  };
}

async function checkSyncSigner(): Promise<void> {
  const body = envelope('check');
  const timestamp = 1_700_000_000;
  const expected = await signRequest({ keyId: KEY_ID, secret: SECRET, body, timestamp });
  const actual = createHmac('sha256', SECRET).update(`${timestamp}:${body}`).digest('hex');
  if (actual !== expected['X-Signature']) throw new Error('sync signer differs from signRequest');
}

async function load(url: string, seconds: number): Promise<LoadResult> {
  const pool = await Promise.all(
    Array.from({ length: Math.ceil(1500 * seconds) }, () => signedEvent(nextEventId('load'))),
  );
  return runLoad(
    {
      url,
      method: 'POST',
      requests: [
        {
          setupRequest: (request) => {
            let event = pool.pop();
            if (event === undefined) {
              fallbackSigned++;
              event = signedEventSync(nextEventId('load'));
            }
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

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

async function post(url: string, event: Signed): Promise<{ status: number; duplicate: boolean }> {
  const response = await fetch(url, { method: 'POST', headers: event.headers, body: event.body });
  const json = (await response.json().catch(() => ({}))) as { duplicate?: unknown };
  return { status: response.status, duplicate: json.duplicate === true };
}

/** Counts stored events whose id starts with `prefix`, received at or after `from`. */
async function countStored(gateway: string, prefix: string, from: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ event_type: EVENT_TYPE, from, page_size: '100' });
    if (cursor !== null) query.set('cursor', cursor);
    const response = await fetch(`${gateway}/admin/events?${query}`, { headers: ADMIN });
    if (!response.ok) throw new Error(`admin events: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as {
      data: { event_id: string }[];
      next_cursor: string | null;
    };
    count += page.data.filter((e) => e.event_id.startsWith(prefix)).length;
    cursor = page.next_cursor;
  } while (cursor !== null);
  return count;
}

async function main(): Promise<void> {
  await checkSyncSigner();
  const sandbox = await startSandboxServer({ port: SANDBOX_PORT, host: HOST });
  const state = mkdtempSync(join(tmpdir(), 'edgepay-bench-relay-'));
  const children: ChildProcess[] = [];
  let receiver: { close: () => Promise<void> } | undefined;
  try {
    await migrate(state);
    children.push(
      await startWorker(
        [
          '--env-file',
          join(root, '.dev.vars.example'),
          '--var',
          `UPSTREAM_BASE_URL:${sandbox.url}`,
          '--var',
          'ALLOW_LOCAL_SUBSCRIBERS:true',
        ],
        GATEWAY_PORT,
        state,
      ),
    );
    children.push(
      await startWorker(
        ['-c', join(root, 'bench', 'ok-worker', 'wrangler.toml')],
        FLOOR_PORT,
        join(state, 'floor'),
      ),
    );
    const gateway = `http://${HOST}:${GATEWAY_PORT}`;
    const probe = await post(`${gateway}/webhooks`, await signedEvent(nextEventId('probe')));
    if (probe.status !== 200) throw new Error(`probe ingest failed: ${probe.status}`);

    // (1) Throughput, before any subscription exists (ingest = verify, validate, store).
    const cases: Record<string, string> = {
      '(a) bare Worker answering 200': `http://${HOST}:${FLOOR_PORT}/webhooks`,
      '(b) relay POST /webhooks': `${gateway}/webhooks`,
    };
    const summary = await compareCases(
      Object.fromEntries(
        Object.entries(cases).map(([name, url]) => [name, (seconds: number) => load(url, seconds)]),
      ),
    );

    // (2) Duplicate storm: every event sent 3 times at once, all events concurrently.
    const stormFrom = new Date(Date.now() - 1000).toISOString();
    const stormPrefix = `evt_bench_${process.pid}_storm_`;
    const stormEvents = await Promise.all(
      Array.from({ length: STORM_EVENTS }, () => signedEvent(nextEventId('storm'))),
    );
    const answers = (
      await Promise.all(
        stormEvents.map((event) =>
          Promise.all([0, 1, 2].map(() => post(`${gateway}/webhooks`, event))),
        ),
      )
    ).flat();
    const stormNon200 = answers.filter((a) => a.status !== 200).length;
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
    });
    if (created.status !== 201)
      throw new Error(`subscription: ${created.status} ${await created.text()}`);
    const { data } = (await created.json()) as { data: { secret: string } };
    const arrivals = new Map<string, number>();
    let rejected = 0;
    receiver = await startReceiver({
      secret: data.secret,
      port,
      onEvent: (event) => {
        if (!arrivals.has(event.eventId)) arrivals.set(event.eventId, Date.now());
      },
      onRejected: () => rejected++,
    });
    const sent = new Map<string, number>();
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const eventId = nextEventId('latency');
      const event = await signedEvent(eventId);
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
    const [a, b] = Object.values(summary);
    if (a !== undefined && b !== undefined) {
      console.log(
        `\nb/a req/s = ${(b.rps / a.rps).toFixed(2)}, b p99 / a p99 = ${(b.p99 / a.p99).toFixed(2)}`,
      );
    }
    console.log(
      `${LOAD_PLAN.rounds} rounds, ${LOAD_PLAN.duration} s each after ${LOAD_PLAN.warmup} s warm-up, 10 connections` +
        (fallbackSigned > 0 ? ` (${fallbackSigned} events signed by the sync fallback)` : ''),
    );
    console.log('\n| measure | value |');
    console.log('|---|---|');
    console.log(
      `| duplicate storm: ${STORM_EVENTS} events x 3 concurrent | ${duplicates} of ${2 * STORM_EVENTS} duplicates dropped (${((100 * duplicates) / (2 * STORM_EVENTS)).toFixed(1)}%, target 100%), ${stormNon200} non-200, ${stored} rows stored (want ${STORM_EVENTS}) |`,
    );
    console.log(
      `| ingest -> first delivery attempt, ${LATENCY_EVENTS} events | median ${median(latencies)} ms, p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms (target <= 1100 ms); ${latencies.length}/${LATENCY_EVENTS} arrived, ${rejected} rejected |`,
    );
  } finally {
    await receiver?.close();
    for (const child of children) child.kill('SIGTERM');
    await sandbox.close();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
