// Gateway throughput (issue: gateway hardening, "Measured"). Under `wrangler dev`, with
// load from this second process (autocannon): (a) a bare pass-through Worker to the same
// upstream (the floor), (b) the gateway on GET /payments/verify/<ref>, (c) the gateway on
// an idempotent POST /disbursements/initialize (new key and reference each request); and,
// as diagnostics, (a') the floor writing one access-log line per request like the gateway
// and (a'') the floor sent (c)'s signed POST, so the upstream's share of (c) shows.
// The floors are sent what the gateway sends upstream for (b): a signed GET, same path.
// 10 connections, 10 s after a 3 s warm-up, 3 rounds with the order rotated, medians.
// Run: node bench/gateway.ts   (DURATION_SEC, WARMUP_SEC, ROUNDS to shorten)
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { signRequest } from '../lib/signing.ts';
import { startSandboxServer } from '../scripts/sandbox-server.ts';
import {
  compareCases,
  HOST,
  LOAD_PLAN,
  migrate,
  printComparison,
  root,
  runLoad,
  startWorker,
} from './harness.ts';

// 197xx/198xx: apart from the e2e test's 187xx, so a benchmark never collides with npm test.
const SANDBOX_PORT = 19888;
const GATEWAY_PORT = 19787;
const FLOOR_PORT = 19789;
const LOGGING_FLOOR_PORT = 19790;
const TOKEN = 'dev-gateway-token';

// The floor is sent exactly what the gateway sends upstream for (b): a signed GET.
const KEY_ID = 'sandbox-key';
const SECRET = 'sandbox-secret';

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
    const floor = join(root, 'bench', 'passthrough', 'wrangler.toml');
    children.push(await startWorker(['-c', floor], FLOOR_PORT, join(state, 'floor')));
    children.push(
      await startWorker(
        ['-c', floor, '--var', 'LOG_LINE:true'],
        LOGGING_FLOOR_PORT,
        join(state, 'logging-floor'),
      ),
    );
    const gateway = `http://${HOST}:${GATEWAY_PORT}`;
    const seed = await fetch(`${gateway}/payments/initialize`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': 'bench-seed',
      },
      body: JSON.stringify({
        reference: 'bench-seed',
        email: 'bench@example.com',
        amount: 1,
        currency: 'NGN',
      }),
    });
    if (!seed.ok) throw new Error(`seed payment failed: ${seed.status} ${await seed.text()}`);
    const verify = '/payments/verify/bench-seed';
    let counter = 0;
    const cases: Record<string, () => Promise<autocannon.Options>> = {
      // Signed just before each run (a signature is good for 300 s; a run lasts 13).
      '(a) pass-through Worker': async () => ({
        url: `http://${HOST}:${FLOOR_PORT}${verify}`,
        headers: { ...(await signRequest({ keyId: KEY_ID, secret: SECRET, body: '' })) },
      }),
      // Diagnostic, not a target: the floor plus the one log line every gateway request writes.
      "(a') pass-through Worker + one log line": async () => ({
        url: `http://${HOST}:${LOGGING_FLOOR_PORT}${verify}`,
        headers: { ...(await signRequest({ keyId: KEY_ID, secret: SECRET, body: '' })) },
      }),
      // Diagnostic: what (c) asks of the upstream, without the gateway. Signed in advance
      // (setupRequest is synchronous); the pool outlasts a run at the floor's rate.
      "(a'') pass-through Worker, the same POST": async () => {
        const pool = await Promise.all(
          Array.from({ length: 400 * (LOAD_PLAN.warmup + LOAD_PLAN.duration) }, async () => {
            const id = `bench-floor-${process.pid}-${counter++}`;
            const body = transfer(id);
            return { body, headers: await signRequest({ keyId: KEY_ID, secret: SECRET, body }) };
          }),
        );
        return {
          url: `http://${HOST}:${FLOOR_PORT}/disbursements/initialize`,
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          requests: [
            {
              setupRequest: (request) => {
                const signed = pool.pop();
                if (signed === undefined) throw new Error('signed pool exhausted');
                return {
                  ...request,
                  headers: { ...request.headers, ...signed.headers },
                  body: signed.body,
                };
              },
            },
          ],
        };
      },
      '(b) gateway GET verify': async () => ({
        url: `${gateway}${verify}`,
        headers: { Authorization: `Bearer ${TOKEN}` },
      }),
      '(c) gateway idempotent POST': async () => ({
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
      }),
    };
    const summary = await compareCases(
      Object.fromEntries(
        Object.entries(cases).map(([name, options]) => [
          name,
          async (seconds: number) => runLoad(await options(), seconds),
        ]),
      ),
    );
    printComparison(summary);
    const [a, logged, posted, b, c] = Object.values(summary);
    if (a && logged && posted && b && c) {
      const ratio = (x: number, y: number) => (x / y).toFixed(2);
      console.log(
        `\nb/a = ${ratio(b.rps, a.rps)} (target >= 0.80), b p99 / a p99 = ${ratio(b.p99, a.p99)} (target <= 1.2), c/a = ${ratio(c.rps, a.rps)} (target >= 0.50)`,
      );
      console.log(
        `against (a'), the floor with the same log line: b/a' = ${ratio(b.rps, logged.rps)}, b p99 / a' p99 = ${ratio(b.p99, logged.p99)}, c/a' = ${ratio(c.rps, logged.rps)}; a'/a = ${ratio(logged.rps, a.rps)}`,
      );
      console.log(
        `the POST upstream alone: a''/a = ${ratio(posted.rps, a.rps)}; c/a'' = ${ratio(c.rps, posted.rps)}`,
      );
    }
    console.log(
      `${LOAD_PLAN.rounds} rounds, ${LOAD_PLAN.duration} s each after ${LOAD_PLAN.warmup} s warm-up, 10 connections`,
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await sandbox.close();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
