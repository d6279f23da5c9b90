// Gateway throughput and CPU per request, under `wrangler dev`, with load from this second
// process (autocannon). The reference is a pass-through Worker to the same upstream that
// writes the gateway's access-log line per request (a Worker that logs nothing is not a
// fair floor: every production gateway logs each request):
//   (a)  the floor sent what the gateway sends upstream for (b): a signed GET, same path;
//   (a') the floor sent what the gateway sends upstream for (c): a signed POST;
//   (b)  the gateway on GET /payments/verify/<ref>;
//   (c)  the gateway on an idempotent POST /disbursements/initialize (new key and
//        reference each request);
//   (i)  informational: the bare floor, no log line, sent (a)'s GET.
// Targets, same run: b/a >= 0.90 with b's p99 <= 1.2x a's; c/a' >= 0.50. And the
// gateway isolate's CPU ms per request for (b) and (c), from a V8 CPU profile taken first;
// over the comparison's runs, each case's Worker isolate thread's time from /proc.
// Run: npm run bench -- gateway   (DURATION_SEC, WARMUP_SEC, ROUNDS to shorten)
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import {
  type CpuProfileResult,
  connectInspector,
  printHotspots,
  profileLoad,
} from './cpu-profile.ts';
import { floorGet, floorPost, gatewayGet, gatewayPost, seedPayment } from './gateway-cases.ts';
import { migrate, root, startSandbox, startWorker } from './harness.ts';
import { assertPortsFree, HOST, onCleanup, runBenchmark, tempState } from './lifecycle.ts';
import {
  compareCases,
  describePlan,
  LOAD_PLAN,
  type LoadCase,
  type LoadResult,
  printComparison,
  runLoad,
} from './load.ts';
import { type WorkerTime, workerCpuMeter } from './proc-cpu.ts';
import { assertSignSyncMatchesSdk } from './sign-sync.ts';

// 197xx/198xx: apart from `npm start` (8787-8789) and the e2e test (187xx).
const SANDBOX_PORT = 19888;
const GATEWAY = { port: 19787, inspectorPort: 19887 };
const FLOOR = { port: 19789, inspectorPort: 19889 };
const LOGGING_FLOOR = { port: 19790, inspectorPort: 19890 };

const CASES = {
  get: '(a) floor + access-log line, GET (the reference)',
  post: "(a') floor + access-log line, the same POST as (c)",
  gatewayGet: '(b) gateway GET verify',
  gatewayPost: '(c) gateway idempotent POST',
  bare: '(i) bare floor, no log line, GET (informational)',
} as const;

/** What a case sends: autocannon's options, built afresh for each run. */
type Load = () => Promise<autocannon.Options> | autocannon.Options;

const ratio = (x: number, y: number) => x / y;
function verdict(name: string, value: number, comparison: '>=' | '<=', target: number): string {
  const met = comparison === '>=' ? value >= target : value <= target;
  // Three decimals, so that a miss never rounds to the target (0.495 is not 0.50).
  return `${name} = ${value.toFixed(3)} (target ${comparison} ${target}: ${met ? 'met' : 'MISSED'})`;
}

function printTargets(summary: Record<string, LoadResult>): void {
  const { [CASES.get]: a, [CASES.post]: aPost, [CASES.gatewayGet]: b } = summary;
  const { [CASES.gatewayPost]: c, [CASES.bare]: bare } = summary;
  if (!a || !aPost || !b || !c || !bare) return;
  console.log(`\n${describePlan()}`);
  console.log('Targets, against the floor writing the same access-log line, same run:');
  console.log(`  ${verdict('b/a req/s', ratio(b.rps, a.rps), '>=', 0.9)}`);
  console.log(`  ${verdict('b p99 / a p99', ratio(b.p99, a.p99), '<=', 1.2)}`);
  console.log(`  ${verdict("c/a' req/s", ratio(c.rps, aPost.rps), '>=', 0.5)}`);
  console.log(
    `Informational, against the bare floor (i): a/i = ${ratio(a.rps, bare.rps).toFixed(2)} ` +
      `(what the log line costs the floor), b/i = ${ratio(b.rps, bare.rps).toFixed(2)}, ` +
      `b p99 / i p99 = ${ratio(b.p99, bare.p99).toFixed(2)}`,
  );
}

function printCpu(
  workers: Record<string, WorkerTime>,
  profiles: Record<string, CpuProfileResult>,
): void {
  const ms = (value: number | undefined) => value?.toFixed(2) ?? 'n/a';
  console.log(
    "\nEach case's Worker over the comparison's runs (no profiler attached), ms per request, " +
      'from /proc: its isolate thread on a core and ready but waiting for one; the CPU of ' +
      'every process of its wrangler dev (wrangler, its proxy and the Worker).',
  );
  console.log('| case | isolate thread on a core | waiting for a core | whole wrangler dev |');
  console.log('|---|---|---|---|');
  for (const [name, time] of Object.entries(workers)) {
    console.log(`| ${name} | ${ms(time.cpuMs)} | ${ms(time.waitMs)} | ${ms(time.stackMs)} |`);
  }
  console.log(
    `\nGateway isolate CPU ms per request from a V8 CPU profile (${LOAD_PLAN.duration} s per ` +
      'case, before the comparison): sampled non-idle time / requests answered.',
  );
  console.log('| case | req/s while profiled | CPU ms/request (profile) | whole wrangler dev |');
  console.log('|---|---|---|---|');
  for (const [name, r] of Object.entries(profiles)) {
    console.log(
      `| ${name} | ${r.load.rps.toFixed(0)} | ${ms(r.cpuMsPerRequest)} | ${ms(r.stackCpuMsPerRequest)} |`,
    );
  }
  for (const [name, r] of Object.entries(profiles)) printHotspots(`${name} profile`, r, 12);
}

await runBenchmark(async () => {
  const workers = [GATEWAY, FLOOR, LOGGING_FLOOR];
  const ports = workers.flatMap((w) => [w.port, w.inspectorPort]);
  await assertPortsFree([SANDBOX_PORT, ...ports]);
  await assertSignSyncMatchesSdk();
  const sandbox = await startSandbox(SANDBOX_PORT);
  const state = tempState('edgepay-bench-gateway-');
  await migrate(state);
  const upstream = ['--var', `UPSTREAM_BASE_URL:${sandbox.url}`];
  const env = ['--env-file', join(root, '.dev.vars.example'), ...upstream];
  const gatewayWorker = await startWorker(env, GATEWAY, state);
  const inspector = await connectInspector(GATEWAY.inspectorPort);
  onCleanup(() => inspector.close());
  const floorConfig = ['-c', join(root, 'bench', 'passthrough', 'wrangler.toml'), ...upstream];
  const loggingFloorWorker = await startWorker(
    [...floorConfig, '--var', 'LOG_LINE:true'],
    LOGGING_FLOOR,
    join(state, 'lf'),
  );
  const floorWorker = await startWorker(floorConfig, FLOOR, join(state, 'floor'));

  const url = (port: number) => `http://${HOST}:${port}`;
  const gateway = url(GATEWAY.port);
  await seedPayment(gateway);

  // The profiles first: the inspector is connected before any load (see cpu-profile.ts)
  // and closed before the comparison, so no Worker there has a DevTools client attached.
  const profile = async (name: string, options: () => autocannon.Options) => {
    await runLoad(`${name} (warm-up)`, options(), LOAD_PLAN.warmup);
    return profileLoad(inspector, name, options(), LOAD_PLAN.duration, gatewayWorker.pid);
  };
  const get = await profile(CASES.gatewayGet, () => gatewayGet(gateway));
  const post = await profile(CASES.gatewayPost, () => gatewayPost(gateway));
  inspector.close();

  // Each case: its load, and the Worker whose isolate thread is metered meanwhile.
  const loads: Record<string, { options: Load; worker: ChildProcess }> = {
    [CASES.get]: { options: () => floorGet(url(LOGGING_FLOOR.port)), worker: loggingFloorWorker },
    [CASES.post]: { options: () => floorPost(url(LOGGING_FLOOR.port)), worker: loggingFloorWorker },
    [CASES.gatewayGet]: { options: () => gatewayGet(gateway), worker: gatewayWorker },
    [CASES.gatewayPost]: { options: () => gatewayPost(gateway), worker: gatewayWorker },
    [CASES.bare]: { options: () => floorGet(url(FLOOR.port)), worker: floorWorker },
  };
  const meters = new Map<string, ReturnType<typeof workerCpuMeter>>();
  const cases: Record<string, LoadCase> = {};
  for (const [name, { options, worker }] of Object.entries(loads)) {
    if (worker.pid === undefined) throw new Error(`wrangler for ${name} has no pid`);
    const meter = workerCpuMeter(worker.pid);
    meters.set(name, meter);
    cases[name] = (seconds) => meter.around(async () => runLoad(name, await options(), seconds));
  }
  const summary = await compareCases(cases);
  printComparison(summary);
  printTargets(summary);
  printCpu(Object.fromEntries([...meters].map(([name, meter]) => [name, meter.perRequest()])), {
    [CASES.gatewayGet]: get,
    [CASES.gatewayPost]: post,
  });
  console.log(`\n${new Date().toISOString()}, Node ${process.version}, every answer 2xx`);
});
