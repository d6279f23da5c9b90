// Where the gateway's isolate spends its CPU under load: a V8 CPU profile taken over the
// DevTools protocol from `wrangler dev`'s inspector while autocannon drives one of
// bench/gateway.ts's gateway cases (or bench/relay.ts's webhook ingest), summed by function
// (self time), with the isolate's CPU ms per request. A diagnostic for bench/gateway.ts and
// bench/relay.ts, not a target.
// Run: npm run bench -- profile [get|post|webhook]   (DURATION_SEC, WARMUP_SEC to change;
// PROFILE_DIR=<dir> also writes the profile there as a .cpuprofile for Chrome DevTools)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectInspector, printHotspots, profileLoad } from './cpu-profile.ts';
import { gatewayGet, gatewayPost, seedPayment, webhookIngest } from './gateway-cases.ts';
import { migrate, root, startSandbox, startWorker } from './harness.ts';
import {
  assertPortsFree,
  BenchmarkError,
  HOST,
  onCleanup,
  runBenchmark,
  tempState,
} from './lifecycle.ts';
import { LOAD_PLAN, runLoad } from './load.ts';

// The ports of bench/gateway.ts's gateway and sandbox: the two never run at once.
const GATEWAY = { port: 19787, inspectorPort: 19887 };
const SANDBOX_PORT = 19888;

const mode = process.argv[2] ?? 'post';

await runBenchmark(async () => {
  if (mode !== 'get' && mode !== 'post' && mode !== 'webhook') {
    throw new BenchmarkError(`Usage: npm run bench -- profile [get|post|webhook]  (not "${mode}")`);
  }
  await assertPortsFree([SANDBOX_PORT, GATEWAY.port, GATEWAY.inspectorPort]);
  const sandbox = await startSandbox(SANDBOX_PORT);
  const state = tempState('edgepay-profile-');
  await migrate(state);
  const worker = await startWorker(
    [
      '--env-file',
      join(root, '.dev.vars.example'),
      '--var',
      `UPSTREAM_BASE_URL:${sandbox.url}`,
      // As bench/relay.ts: one client address sends every webhook.
      '--var',
      'WEBHOOK_RATE_LIMIT_PER_MINUTE:0',
    ],
    GATEWAY,
    state,
  );
  // Before any load: see cpu-profile.ts.
  const inspector = await connectInspector(GATEWAY.inspectorPort);
  onCleanup(() => inspector.close());
  const gateway = `http://${HOST}:${GATEWAY.port}`;
  await seedPayment(gateway);
  const cases = { get: gatewayGet, post: gatewayPost, webhook: webhookIngest };
  const options = () => cases[mode](gateway);
  const name = `gateway ${mode}`;
  await runLoad(`${name} (warm-up)`, options(), LOAD_PLAN.warmup);
  const result = await profileLoad(inspector, name, options(), LOAD_PLAN.duration, worker.pid);
  const ms = (value: number | undefined) => value?.toFixed(2) ?? 'n/a';
  console.log(
    `${name}: ${result.load.rps.toFixed(0)} req/s over ${LOAD_PLAN.duration} s, ` +
      `${result.load.answered} answers (all 2xx). Per request: CPU (profile) ` +
      `${ms(result.cpuMsPerRequest)} ms; the isolate thread on a core ${ms(result.thread?.cpuMs)} ms ` +
      `and waiting for one ${ms(result.thread?.waitMs)} ms (/proc); whole wrangler dev ` +
      `${ms(result.stackCpuMsPerRequest)} ms`,
  );
  printHotspots(name, result, 25);
  const dir = process.env.PROFILE_DIR;
  if (dir !== undefined) {
    const file = join(dir, `gateway-${mode}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(result.profile));
    console.log(`\nProfile written to ${file}`);
  }
});
