// Where the gateway's isolate spends its CPU under load: a V8 CPU profile taken over the
// Chrome DevTools protocol from `wrangler dev`'s inspector while autocannon drives one
// case, summed by function (self time). A diagnostic for bench/gateway.ts, not a target.
// Run: node bench/profile-gateway.ts [post|get]   (post: bench/gateway.ts case (c))
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { startSandboxServer } from '../scripts/sandbox-server.ts';
import { HOST, migrate, root, runLoad, startWorker } from './harness.ts';

const GATEWAY_PORT = 19787;
const SANDBOX_PORT = 19888;
const INSPECTOR_PORT = 19229;
const TOKEN = 'dev-gateway-token';
const SECONDS = Number(process.env.DURATION_SEC ?? 6);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A minimal DevTools protocol client: sends a command, resolves with its result. */
async function connect(url: string): Promise<{
  send: (method: string, params?: object) => Promise<Record<string, unknown>>;
  close: () => void;
}> {
  // wrangler's inspector proxy wants an Origin it trusts (undici takes headers here).
  const init = { headers: { Origin: 'http://localhost' } } as unknown as string[];
  const socket = new WebSocket(url, init);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
  let next = 0;
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: object };
    const resolve = message.id === undefined ? undefined : pending.get(message.id);
    if (resolve === undefined || message.id === undefined) return;
    pending.delete(message.id);
    resolve((message.result ?? {}) as Record<string, unknown>);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        next += 1;
        pending.set(next, resolve);
        socket.send(JSON.stringify({ id: next, method, params }));
      }),
    close: () => socket.close(),
  };
}

function loadOf(mode: string): autocannon.Options {
  const gateway = `http://${HOST}:${GATEWAY_PORT}`;
  if (mode === 'get') {
    return {
      url: `${gateway}/payments/verify/missing`,
      headers: { Authorization: `Bearer ${TOKEN}` },
    };
  }
  let counter = 0;
  return {
    url: `${gateway}/disbursements/initialize`,
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => {
          const reference = `profile-${process.pid}-${counter++}`;
          return {
            ...request,
            headers: { ...request.headers, 'Idempotency-Key': reference },
            body: JSON.stringify({
              reference,
              amount: 1,
              currency: 'NGN',
              destination_bank_code: '058',
              destination_bank_account: '0123456789',
              destination_bank_name: 'GTBank',
              customer_name: 'Bench',
              customer_email: 'bench@example.com',
            }),
          };
        },
      },
    ],
  };
}

/** Self time per function, largest first, as `[label, ms]`. */
function selfTimes(profile: Profile): [string, number][] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  profile.samples.forEach((sample, index) => {
    const frame = nodes.get(sample)?.callFrame;
    const label = frame
      ? `${frame.functionName || '(anonymous)'} ${frame.url.split('/').pop() ?? ''}:${frame.lineNumber}`
      : '?';
    totals.set(label, (totals.get(label) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

const mode = process.argv[2] ?? 'post';
const sandbox = await startSandboxServer({ port: SANDBOX_PORT, host: HOST });
const state = mkdtempSync(join(tmpdir(), 'edgepay-profile-'));
try {
  await migrate(state);
  const worker = await startWorker(
    [
      '--env-file',
      join(root, '.dev.vars.example'),
      '--var',
      `UPSTREAM_BASE_URL:${sandbox.url}`,
      '--inspector-port',
      String(INSPECTOR_PORT),
    ],
    GATEWAY_PORT,
    state,
  );
  try {
    const inspector = await connect(`ws://${HOST}:${INSPECTOR_PORT}/ws`);
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.setSamplingInterval', { interval: 200 });
    const options = loadOf(mode);
    await runLoad(options, 2);
    await inspector.send('Profiler.start');
    const load = await runLoad(options, SECONDS);
    const { profile } = (await inspector.send('Profiler.stop')) as { profile: Profile };
    inspector.close();
    const rows = selfTimes(profile);
    const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
    console.log(
      `${mode}: ${load.rps.toFixed(0)} req/s over ${SECONDS} s; ${total.toFixed(0)} ms sampled\n`,
    );
    console.log('| self ms | share | function |\n|---|---|---|');
    for (const [label, ms] of rows.slice(0, 25)) {
      console.log(`| ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)} % | ${label} |`);
    }
  } finally {
    worker.kill('SIGTERM');
  }
} finally {
  await sandbox.close();
  rmSync(state, { recursive: true, force: true });
}
