// SDK overhead (issue: SDK, "Measured"): client.transfers.verify(ref) against an in-process
// handler returning a canned response, vs a hand-written sign + fetch + JSON.parse of the
// same request to the same handler. Median and p99 wall time per call, same run, 3 rounds
// with the order rotated. Run: node bench/overhead.ts
import { PaymentsClient } from '../lib/index.ts';
import { signRequest } from '../lib/signing.ts';

const CALLS = Number(process.env.CALLS ?? 10_000);
const BASE = 'http://upstream.bench';
const canned = JSON.stringify({
  status: 'success',
  data: {
    reference: 'tr_0001',
    amount: 5000,
    fee: 10,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
    customer_name: 'Grace Hopper',
    customer_email: 'grace@example.com',
    narration: 'Invoice 42',
    transfer_status: 'success',
    metadata: {},
    created_at: '2026-11-23T00:00:00.000Z',
    updated_at: '2026-11-23T00:00:05.000Z',
  },
});
// The same in-process handler for both: a canned answer, like a warm upstream at zero latency.
const handler = async (_input: RequestInfo | URL, _init?: RequestInit) =>
  new Response(canned, { headers: { 'Content-Type': 'application/json' } });

const client = new PaymentsClient({
  keyId: 'sandbox-key',
  secret: 'sandbox-secret',
  baseUrl: BASE,
  fetch: handler,
});

const cases: Record<string, () => Promise<unknown>> = {
  'client.transfers.verify': () => client.transfers.verify('tr_0001'),
  'hand-written sign + fetch + JSON.parse': async () => {
    const headers = await signRequest({ keyId: 'sandbox-key', secret: 'sandbox-secret', body: '' });
    const response = await handler(`${BASE}/disbursements/verify/tr_0001`, {
      headers: { ...headers },
    });
    return JSON.parse(await response.text());
  },
};

async function timings(run: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 1_000; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const names = Object.keys(cases);
const medians: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
const p99s: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < 3; round++) {
  for (const name of names.slice(round % 2).concat(names.slice(0, round % 2))) {
    const sorted = await timings(cases[name] as () => Promise<unknown>);
    medians[name]?.push(quantile(sorted, 0.5));
    p99s[name]?.push(quantile(sorted, 0.99));
  }
}
const mid = (values: number[] = []) => [...values].sort((a, b) => a - b)[1] ?? 0;
console.log('| call | median µs | p99 µs |');
console.log('|---|---|---|');
for (const name of names) {
  console.log(
    `| ${name} | ${(mid(medians[name]) * 1000).toFixed(1)} | ${(mid(p99s[name]) * 1000).toFixed(1)} |`,
  );
}
const ratio =
  mid(medians['client.transfers.verify']) / mid(medians['hand-written sign + fetch + JSON.parse']);
const ratio99 =
  mid(p99s['client.transfers.verify']) / mid(p99s['hand-written sign + fetch + JSON.parse']);
console.log(
  `\nSDK / hand-written: median ${ratio.toFixed(3)} (target <= 1.25), p99 ${ratio99.toFixed(3)}; ${CALLS} calls each, 3 rounds`,
);
