// SDK overhead (target: median ratio <= 1.25, p99 <= 1.5): client.transfers.verify(ref)
// against an in-process handler returning a canned response, vs a hand-written sign + fetch +
// JSON.parse of the same request to the same handler. Median and p99 wall time per call,
// same run, interleaved batches of 100 in alternating order after 10 untimed batches of each.
// Run: npm run bench -- overhead (CALLS, 20,000 by default).
import { PaymentsClient } from '../lib/index.ts';
import { signRequest } from '../lib/signing.ts';

const CALLS = Number(process.env.CALLS ?? 20_000);
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

// Interleaved batches cancel machine drift: every round runs BATCH calls of each case in
// rotated order; the per-call samples of all rounds give the median and p99.
const BATCH = 100;

async function sample(run: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < BATCH; i++) {
    const started = performance.now();
    await run();
    into.push(performance.now() - started);
  }
}

const names = Object.keys(cases);
const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let warm = 0; warm < 10; warm++) {
  for (const name of names) await sample(cases[name] as () => Promise<unknown>, []);
}
for (let round = 0; round * BATCH < CALLS; round++) {
  const order = round % 2 === 0 ? names : [...names].reverse();
  for (const name of order)
    await sample(cases[name] as () => Promise<unknown>, samples[name] ?? []);
}
const quantile = (values: number[] = [], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
console.log('| call | median µs | p99 µs |');
console.log('|---|---|---|');
for (const name of names) {
  console.log(
    `| ${name} | ${(quantile(samples[name], 0.5) * 1000).toFixed(1)} | ${(quantile(samples[name], 0.99) * 1000).toFixed(1)} |`,
  );
}
const [sdk, hand] = names.map((name) => samples[name]);
const ratio = quantile(sdk, 0.5) / quantile(hand, 0.5);
const ratio99 = quantile(sdk, 0.99) / quantile(hand, 0.99);
console.log(
  `\nSDK / hand-written: median ${ratio.toFixed(3)} (target <= 1.25), p99 ${ratio99.toFixed(3)} (target <= 1.5); ${CALLS} calls each in interleaved batches of ${BATCH}, after 10 untimed batches of each`,
);
