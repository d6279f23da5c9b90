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
// gateway isolate's CPU ms per request for (b) and (c), from a V8 CPU profile taken first,
// with the isolate thread's CPU time over the comparison's runs as a cross-check.
// Run: npm run bench -- gateway   (DURATION_SEC, WARMUP_SEC, ROUNDS to shorten)
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
import { isolateCpuMeter, isolateProcess, type ThreadTime } from './proc-cpu.ts';
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

const ratio = (x: number, y: number) => x / y;
function verdict(name: string, value: number, comparison: '>=' | '<=', target: number): string {
  const met = comparison === '>=' ? value >= target : value <= target;
  return `${name} = ${value.toFixed(2)} (target ${comparison} ${target}: ${met ? 'met' : 'MISSED'})`;
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
  profiles: Record<string, CpuProfileResult>,
  threads: Record<string, ThreadTime>,
): void {
  console.log(
    `\nGateway isolate, ms per request. CPU (profile): the V8 CPU profile's sampled non-idle ` +
      `time / requests answered (${LOAD_PLAN.duration} s per case before the comparison). ` +
      `Thread: the isolate thread's time from /proc over the comparison's runs, no profiler ` +
      `attached: on a core, and ready but waiting for one. Whole wrangler dev: the CPU of ` +
      `every process of its group while profiled.`,
  );
  console.log(
    '| case | req/s while profiled | CPU (profile) | thread on a core | thread waiting for a core | whole wrangler dev |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [name, r] of Object.entries(profiles)) {
    const thread = threads[name];
    const ms = (value: number | undefined) => value?.toFixed(2) ?? 'n/a';
    console.log(
      `| ${name} | ${r.load.rps.toFixed(0)} | ${ms(r.cpuMsPerRequest)} | ${ms(thread?.cpuMs)} | ` +
        `${ms(thread?.waitMs)} | ${ms(r.stackCpuMsPerRequest)} |`,
    );
  }
  for (const [name, r] of Object.entries(profiles)) printHotspots(`${name} profile`, r, 12);
}

await runBenchmark(async () => {
  const workers = [GATEWAY, FLOOR, LOGGING_FLOOR];
  await assertPortsFree([SANDBOX_PORT, ...workers.flatMap((w) => [w.port, w.inspectorPort])]);
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
  await startWorker([...floorConfig, '--var', 'LOG_LINE:true'], LOGGING_FLOOR, join(state, 'lf'));
  await startWorker(floorConfig, FLOOR, join(state, 'floor'));

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

  const isolate = gatewayWorker.pid === undefined ? undefined : isolateProcess(gatewayWorker.pid);
  if (isolate === undefined) throw new Error("cannot find the gateway's workerd in /proc");
  const threadGet = isolateCpuMeter(isolate);
  const threadPost = isolateCpuMeter(isolate);
  const cases: Record<string, LoadCase> = {
    [CASES.get]: async (seconds) =>
      runLoad(CASES.get, await floorGet(url(LOGGING_FLOOR.port)), seconds),
    [CASES.post]: (seconds) => runLoad(CASES.post, floorPost(url(LOGGING_FLOOR.port)), seconds),
    [CASES.gatewayGet]: (seconds) =>
      threadGet.around(() => runLoad(CASES.gatewayGet, gatewayGet(gateway), seconds)),
    [CASES.gatewayPost]: (seconds) =>
      threadPost.around(() => runLoad(CASES.gatewayPost, gatewayPost(gateway), seconds)),
    [CASES.bare]: async (seconds) => runLoad(CASES.bare, await floorGet(url(FLOOR.port)), seconds),
  };
  const summary = await compareCases(cases);
  printComparison(summary);
  printTargets(summary);
  printCpu(
    { [CASES.gatewayGet]: get, [CASES.gatewayPost]: post },
    { [CASES.gatewayGet]: threadGet.perRequest(), [CASES.gatewayPost]: threadPost.perRequest() },
  );
  console.log(`\n${new Date().toISOString()}, Node ${process.version}, every answer 2xx`);
});
