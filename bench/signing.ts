// Signing throughput (target: >= 0.9x a bare crypto.subtle.sign): our signer (encode +
// HMAC + hex) against a bare crypto.subtle.sign with the same cached key, node:crypto
// createHmac for context. Sequential ops/s in interleaved batches, medians.
// Run: npm run bench -- signing
import { createHmac } from 'node:crypto';
import { signRequest } from '../lib/signing.ts';

const OPS = Number(process.env.OPS ?? 20_000);
const secret = 'sandbox-secret';
const body = JSON.stringify({
  reference: 'tr_0001',
  amount: 5000,
  currency: 'NGN',
  narration: 'Invoice 42',
});
const encoder = new TextEncoder();
const key = await crypto.subtle.importKey(
  'raw',
  encoder.encode(secret),
  { name: 'HMAC', hash: 'SHA-256' },
  false,
  ['sign'],
);
const payload = encoder.encode(`1700000000:${body}`);

const cases: Record<string, () => Promise<unknown> | unknown> = {
  'edgepay signRequest': () => signRequest({ keyId: 'k', secret, body, timestamp: 1_700_000_000 }),
  'bare crypto.subtle.sign': () => crypto.subtle.sign('HMAC', key, payload),
  'node:crypto createHmac': () =>
    createHmac('sha256', secret).update(`1700000000:${body}`).digest('hex'),
};

// Machine drift (Web Crypto hops through a thread pool) is cancelled by interleaving:
// BATCHES rounds, each running every case for BATCH ops in rotated order; medians per case.
const BATCH = 1_000;
const BATCHES = Math.max(3, Math.round(OPS / BATCH));

async function batchOpsPerSecond(run: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < BATCH; i++) await run();
  return BATCH / ((performance.now() - started) / 1000);
}

const names = Object.keys(cases);
const results: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (const name of names) await batchOpsPerSecond(cases[name] as () => unknown); // warm-up
for (let round = 0; round < BATCHES; round++) {
  const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
  for (const name of order)
    results[name]?.push(await batchOpsPerSecond(cases[name] as () => unknown));
}
const median = (values: number[] = []) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const ours = median(results['edgepay signRequest']);
const bare = median(results['bare crypto.subtle.sign']);
console.log('| signer | ops/s (median of batches) |');
console.log('|---|---|');
for (const name of names)
  console.log(`| ${name} | ${Math.round(median(results[name])).toLocaleString('en')} |`);
console.log(
  `\nours / bare subtle.sign = ${(ours / bare).toFixed(3)} (target >= 0.9); ${BATCHES} interleaved batches of ${BATCH} sequential ops per signer`,
);
