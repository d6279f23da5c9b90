// Event bodies and answer excerpts stored compactly (worker/db/compact-body.ts): the bytes a
// typical value takes as text, as raw DEFLATE (what the relay stores when smaller) and as gzip
// (for comparison), and the CPU one compaction and one expansion cost, in microseconds.
// Bodies are the sandbox's own webhook envelopes (lib/testing/webhooks.ts builds them as the
// sandbox sends them) and one of the relay's own events; answers are what subscribers send back.
// CPU is process CPU time (process.cpuUsage) per operation, median of rounds: less sensitive to
// other load than wall time, but still noisy on a shared machine.
// Run: npm run bench -- compact-body

import { webhookRecord } from '../lib/testing/webhooks.ts';
import { compactText, expandText } from '../worker/db/compact-body.ts';

const OPS = Number(process.env.OPS ?? 2_000);
const ROUNDS = 5;
const AT = Date.UTC(2026, 10, 27, 10, 0, 0);

/** A sandbox webhook body, byte for byte as the sandbox POSTs it (JSON.stringify of its envelope). */
function sandboxBody(type: string, status: string, message: string, data: object): string {
  return JSON.stringify(
    webhookRecord({ type, status, message, at: AT, data: { ...data } }, 'x').body,
  );
}

const bodies: Record<string, string> = {
  'charge_success (no metadata)': sandboxBody(
    'charge_success',
    'success',
    'Payment completed successfully',
    {
      reference: 'pay_7f3c9a2e41',
      amount: '5000.00',
      currency: 'NGN',
      metadata: {},
    },
  ),
  'charge_success (order metadata)': sandboxBody(
    'charge_success',
    'success',
    'Payment completed successfully',
    {
      reference: 'pay_7f3c9a2e41',
      amount: '125000.50',
      currency: 'NGN',
      metadata: {
        order_id: 'ord_2026_000183',
        customer: {
          name: 'Adaeze Okafor',
          email: 'adaeze.okafor@example.com',
          phone: '+2348012345678',
        },
        items: [
          { sku: 'SKU-1001', name: 'Wireless headphones', quantity: 1, unit_price: '85000.00' },
          { sku: 'SKU-2040', name: 'USB-C charging cable', quantity: 2, unit_price: '20000.25' },
        ],
      },
    },
  ),
  disbursement_success: sandboxBody(
    'disbursement_success',
    'success',
    'Transfer completed successfully',
    {
      reference: 'tr_0001',
      amount: '5000.00',
      currency: 'NGN',
      metadata: { narration: 'Invoice 42' },
    },
  ),
  direct_debit_success: sandboxBody(
    'direct_debit_success',
    'success',
    'Debit collected successfully',
    {
      payment_reference: 'dd_pay_91ac2f',
      mandate_reference: 'mnd_4be0c7d2',
      debit_amount: '2500.00',
      status: 'success',
    },
  ),
  'subscription.disabled (relay)': JSON.stringify({
    event_type: 'subscription.disabled',
    event_id: 'evt_relay_5d0f0e6c3f9a4c55a1d7b3e2c8f61a90',
    timestamp: new Date(AT).toISOString(),
    message: 'A subscription was disabled and gets no deliveries until it is enabled again',
    data: {
      subscription_id: 'sub_0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
      url: 'https://hooks.example.com/edgepay',
      reason: '410 Gone from the subscriber at 2026-11-27T10:00:00.000Z',
      disabled_at: '2026-11-27T10:00:00.000Z',
    },
  }),
};

const nginx502 = `<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n`;
const errorPage =
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Error</title><style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}pre{background:#f6f6f6;padding:1rem;overflow:auto}</style></head><body><h1>Internal Server Error</h1><p>The server encountered an unexpected condition that prevented it from fulfilling the request.</p><pre>${Array.from(
    { length: 30 },
    (_, i) =>
      `    at Object.handler (/srv/app/node_modules/framework/lib/router/layer.js:${95 + i}:5)`,
  ).join('\n')}</pre></body></html>`.slice(0, 2048);

const answers: Record<string, string> = {
  'OK (text)': 'OK',
  '{"received":true}': '{"received":true}',
  'nginx 502 page': nginx502,
  'framework error page (2 KB cut)': errorPage,
};

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;

async function gzipBytes(text: string): Promise<number> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

const storedBytes = (value: string | Uint8Array) =>
  typeof value === 'string' ? utf8(value) : value.byteLength;

/** CPU microseconds per call of `run`, median of {@link ROUNDS} rounds of {@link OPS} calls. */
async function cpuMicros(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) await run(); // warm-up
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < OPS; i++) await run();
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / OPS);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)] ?? 0;
}

async function table(title: string, samples: Record<string, string>): Promise<void> {
  console.log(`\n${title}`);
  console.log('| value | text B | stored B | saved | gzip B | compact CPU µs | expand CPU µs |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [name, text] of Object.entries(samples)) {
    const stored = await compactText(text);
    if ((await expandText(stored)) !== text) throw new Error(`${name}: not returned exactly`);
    const textBytes = utf8(text);
    const kept = storedBytes(stored);
    const compact = await cpuMicros(() => compactText(text));
    const expand = typeof stored === 'string' ? 0 : await cpuMicros(() => expandText(stored));
    const saved = `${Math.round((100 * (textBytes - kept)) / textBytes)} %`;
    console.log(
      `| ${name} | ${textBytes} | ${kept} | ${saved} | ${await gzipBytes(text)} | ${compact.toFixed(1)} | ${expand.toFixed(1)} |`,
    );
  }
}

await table('Event bodies (webhook_events.raw_body)', bodies);
await table('Answer excerpts (delivery_attempts.response_excerpt)', answers);
console.log(`\n${OPS} operations x ${ROUNDS} rounds per cell, Node ${process.version}.`);
