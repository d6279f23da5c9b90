// Isolation of subscribers in the webhook relay, under `wrangler dev`: two subscriptions get
// every event; subscriber B answers 204 at once, subscriber A either answers at once too
// (the reference run) or holds every request until the relay's delivery timeout gives up
// (15 s). What is measured is B's time from ingest to its first delivery attempt, p50 and
// p99, in each run; the target is the stalled run within 1.5x of the reference.
// Then ordered against unordered delivery throughput (bench/relay-ordering.ts).
// Run: npm run bench -- relay-isolation   (ISOLATION_EVENTS, ORDER_EVENTS, ORDER_REFERENCES)
import { startRelayGateway } from './harness.ts';
import { assertPortsFree, runBenchmark } from './lifecycle.ts';
import { median } from './load.ts';
import { measureOrdering, orderingPlan } from './relay-ordering.ts';
import {
  admin,
  EVENT_TYPE,
  ingest,
  percentile,
  type Subscriber,
  startSubscriber,
  untilArrived,
} from './relay-subscribers.ts';

// 19900-19919: this benchmark's own range, apart from the other wrangler dev benchmarks.
const SANDBOX_PORT = 19900;
const GATEWAY = { port: 19901, inspectorPort: 19902 };
const SUBSCRIBER_A_PORT = 19903;
const SUBSCRIBER_B_PORT = 19904;
const EVENTS = Math.min(Math.max(Number(process.env.ISOLATION_EVENTS ?? 40), 1), 500);
/** Gap between two ingested events, in milliseconds. */
const GAP_MS = 100;
/** Longest wait for B's arrivals after the last event is sent, in milliseconds. */
const ARRIVAL_DEADLINE_MS = 300_000;

interface RunResult {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly arrived: number;
}

/**
 * One run: both subscriptions created, EVENTS events ingested GAP_MS apart (every answer
 * must be 200), B's arrivals awaited, then both subscriptions deleted so the next run
 * starts with none (A's stalled deliveries then find their subscription gone).
 */
async function run(gateway: string, a: Subscriber, b: Subscriber, tag: string): Promise<RunResult> {
  const ids: string[] = [];
  for (const subscriber of [a, b]) {
    const created = await admin(gateway, 'POST', '/admin/subscriptions', {
      url: subscriber.url,
      event_types: [EVENT_TYPE],
      description: `bench/relay-isolation.ts ${tag}`,
    });
    ids.push(created.data?.id ?? '');
  }
  const sent = new Map<string, number>();
  for (let i = 0; i < EVENTS; i++) {
    const eventId = `evt_isolation_${process.pid}_${tag}_${i}`;
    sent.set(eventId, Date.now());
    await ingest(gateway, eventId);
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
  await untilArrived(b, sent.keys(), ARRIVAL_DEADLINE_MS);
  const latencies = [...sent].flatMap(([id, at]) => {
    const arrived = b.arrivals.get(id);
    return arrived === undefined ? [] : [arrived - at];
  });
  for (const id of ids) await admin(gateway, 'DELETE', `/admin/subscriptions/${id}`);
  return {
    p50: median(latencies),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    arrived: latencies.length,
  };
}

await runBenchmark(async () => {
  await assertPortsFree([
    SANDBOX_PORT,
    GATEWAY.port,
    GATEWAY.inspectorPort,
    SUBSCRIBER_A_PORT,
    SUBSCRIBER_B_PORT,
  ]);
  const { url: gateway } = await startRelayGateway(
    SANDBOX_PORT,
    GATEWAY,
    'edgepay-bench-relay-isolation-',
  );
  const a = await startSubscriber(SUBSCRIBER_A_PORT);
  const b = await startSubscriber(SUBSCRIBER_B_PORT);

  // The reference first: the stalled run leaves A's deliveries retrying behind it.
  const reference = await run(gateway, a, b, 'reference');
  a.stall = true;
  const stalled = await run(gateway, a, b, 'stalled');

  console.log(
    '\n| subscriber A | B: ingest -> first attempt p50 ms | p99 ms | max ms | B arrived |',
  );
  console.log('|---|---|---|---|---|');
  for (const [name, result] of [
    ['answers at once', reference],
    ['stalls until the 15 s timeout', stalled],
  ] as const) {
    console.log(
      `| ${name} | ${result.p50} | ${result.p99} | ${result.max} | ${result.arrived}/${EVENTS} |`,
    );
  }
  const ratio = (x: number, y: number) => (y === 0 ? 'n/a' : (x / y).toFixed(2));
  console.log(
    `\nstalled / reference: p50 ${ratio(stalled.p50, reference.p50)}x, p99 ${ratio(stalled.p99, reference.p99)}x (target <= 1.5x); ${EVENTS} events ${GAP_MS} ms apart per run`,
  );

  // Ordered against unordered delivery, A gone, B answering at once.
  const unordered = await measureOrdering(gateway, b, false);
  const ordered = await measureOrdering(gateway, b, true);
  console.log(
    '\n| subscription | delivered events/s | arrived | same-reference pairs out of order |',
  );
  console.log('|---|---|---|---|');
  for (const [name, result] of [
    ['not ordered', unordered],
    ['ordered: true', ordered],
  ] as const) {
    console.log(
      `| ${name} | ${result.eventsPerSec.toFixed(1)} | ${result.arrived} | ${result.outOfOrder} |`,
    );
  }
  console.log(
    `\nordered / unordered throughput: ${(ordered.eventsPerSec / unordered.eventsPerSec).toFixed(2)}x; ${orderingPlan()}`,
  );
  console.log(`${new Date().toISOString()}, Node ${process.version}, every ingest answer 200`);
});
