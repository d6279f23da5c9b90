// Gateway throughput (issue: gateway hardening, "Measured"). Under `wrangler dev`, with
// load from this second process (autocannon): (a) a bare pass-through Worker to the same
// upstream (the floor), (b) the gateway on GET /payments/verify/<ref>, (c) the gateway on
// an idempotent POST /disbursements/initialize (new key and reference each request).
// 10 connections, 10 s after a 3 s warm-up, 3 rounds with the order rotated, medians.
// Run: node bench/gateway.ts   (DURATION_SEC, WARMUP_SEC, ROUNDS to shorten)
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startSandboxServer } from '../scripts/sandbox-server.ts';
import { HOST, migrate, root, startWorker } from './harness.ts';

// 197xx/198xx: apart from the e2e test's 187xx, so a benchmark never collides with npm test.
const SANDBOX_PORT = 19888;
const GATEWAY_PORT = 19787;
const FLOOR_PORT = 19789;
const DURATION = Number(process.env.DURATION_SEC ?? 10);
const WARMUP = Number(process.env.WARMUP_SEC ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const TOKEN = 'dev-gateway-token';

interface Result {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(options: autocannon.Options, seconds: number): Promise<Result> {
  const result = await autocannon({ connections: 10, duration: seconds, ...options });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

const transfer = (reference: string) =>
  JSON.stringify({
    reference,
    amount: 1,
    currency: 'NGN',
    customer_name: 'Bench',
    customer_email: 'bench@example.com',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  });

async function main(): Promise<void> {
  const sandbox = await startSandboxServer({ port: SANDBOX_PORT, host: HOST });
  const state = mkdtempSync(join(tmpdir(), 'edgepay-bench-'));
  const children: ChildProcess[] = [];
  try {
    await migrate(state);
    children.push(
      await startWorker(
        [
          '--env-file',
          join(root, '.dev.vars.example'),
          '--var',
          `UPSTREAM_BASE_URL:${sandbox.url}`,
        ],
        GATEWAY_PORT,
        state,
      ),
    );
    children.push(
      await startWorker(
        ['-c', join(root, 'bench', 'passthrough', 'wrangler.toml')],
        FLOOR_PORT,
        join(state, 'floor'),
      ),
    );
    const gateway = `http://${HOST}:${GATEWAY_PORT}`;
    const seed = await fetch(`${gateway}/disbursements/initialize`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': 'bench-seed',
      },
      body: transfer('bench-seed'),
    });
    if (!seed.ok) throw new Error(`seed transfer failed: ${seed.status} ${await seed.text()}`);
    let counter = 0;
    const cases: Record<string, autocannon.Options> = {
      '(a) pass-through Worker': { url: `http://${HOST}:${FLOOR_PORT}/payments/verify/bench-seed` },
      '(b) gateway GET verify': {
        url: `${gateway}/disbursements/verify/bench-seed`,
        headers: { Authorization: `Bearer ${TOKEN}` },
      },
      '(c) gateway idempotent POST': {
        url: `${gateway}/disbursements/initialize`,
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => {
              const id = `bench-${process.pid}-${counter++}`;
              return {
                ...request,
                headers: { ...request.headers, 'Idempotency-Key': id },
                body: transfer(id),
              };
            },
          },
        ],
      },
    };
    const names = Object.keys(cases);
    const results: Record<string, Result[]> = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names
        .slice(round % names.length)
        .concat(names.slice(0, round % names.length))) {
        const options = cases[name] as autocannon.Options;
        await load(options, WARMUP);
        results[name]?.push(await load(options, DURATION));
      }
    }
    const median = (values: number[]) =>
      [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0;
    const summary = Object.fromEntries(
      names.map((name) => {
        const runs = results[name] ?? [];
        return [
          name,
          {
            rps: median(runs.map((r) => r.rps)),
            p50: median(runs.map((r) => r.p50)),
            p99: median(runs.map((r) => r.p99)),
            non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
          },
        ];
      }),
    );
    console.log('| case | req/s | p50 ms | p99 ms | non-2xx |');
    console.log('|---|---|---|---|---|');
    for (const name of names) {
      const r = summary[name];
      if (r !== undefined)
        console.log(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} |`);
    }
    const [a, b, c] = names.map((name) => summary[name]);
    if (a !== undefined && b !== undefined && c !== undefined) {
      console.log(
        `\nb/a = ${(b.rps / a.rps).toFixed(2)} (target >= 0.80), b p99 / a p99 = ${(b.p99 / a.p99).toFixed(2)} (target <= 1.2), c/a = ${(c.rps / a.rps).toFixed(2)} (target >= 0.50)`,
      );
    }
    console.log(`${ROUNDS} rounds, ${DURATION} s each after ${WARMUP} s warm-up, 10 connections`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sandbox.close();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
