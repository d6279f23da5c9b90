// What the gateway benchmark sends, shared by bench/gateway.ts and bench/profile-gateway.ts:
// the gateway's signed-proxy GET and idempotent POST, and the same requests as the gateway
// sends them upstream, for the pass-through floors.
import type autocannon from 'autocannon';
import { signRequest } from '../lib/signing.ts';
import { CREDENTIALS, signSync } from './sign-sync.ts';

/** A caller's bearer token in `.dev.vars.example`. */
const TOKEN = 'dev-gateway-token';
/** The payment every GET verifies, created by {@link seedPayment}. */
const VERIFY_PATH = '/payments/verify/bench-seed';
const POST_PATH = '/disbursements/initialize';

let counter = 0;
/** A reference (and idempotency key) no earlier request of this process used. */
const nextReference = (tag: string) => `bench-${tag}-${process.pid}-${counter++}`;

/** The body of the idempotent POST: a 1 NGN transfer with a new reference. */
function transfer(reference: string): string {
  return JSON.stringify({
    reference,
    amount: 1,
    currency: 'NGN',
    customer_name: 'Bench',
    customer_email: 'bench@example.com',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  });
}

/**
 * Creates, through the gateway, the payment the GET cases verify.
 *
 * @param gateway - the gateway's base URL.
 * @throws when the gateway does not answer 2xx within 10 s.
 */
export async function seedPayment(gateway: string): Promise<void> {
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
    signal: AbortSignal.timeout(10_000),
  });
  if (!seed.ok) throw new Error(`seed payment failed: ${seed.status} ${await seed.text()}`);
}

/** The gateway's GET verify of the seeded payment: the gateway signs it upstream. */
export function gatewayGet(gateway: string): autocannon.Options {
  return { url: `${gateway}${VERIFY_PATH}`, headers: { Authorization: `Bearer ${TOKEN}` } };
}

/** The gateway's idempotent POST: a new `Idempotency-Key` and reference per request. */
export function gatewayPost(gateway: string): autocannon.Options {
  return {
    url: `${gateway}${POST_PATH}`,
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => {
          const reference = nextReference('gateway');
          return {
            ...request,
            headers: { ...request.headers, 'Idempotency-Key': reference },
            body: transfer(reference),
          };
        },
      },
    ],
  };
}

/**
 * The relay's webhook ingest as bench/relay.ts loads it: a new `mandate_activated` event
 * (no upstream confirmation) per request, signed as the payment service signs webhooks
 * (`WEBHOOK_SECRET` of `.dev.vars.example` is the merchant secret) as it is sent.
 */
export function webhookIngest(gateway: string): autocannon.Options {
  return {
    url: `${gateway}/webhooks`,
    method: 'POST',
    requests: [
      {
        setupRequest: (request) => {
          const eventId = `evt_${nextReference('webhook')}`;
          const body = JSON.stringify({
            event_type: 'mandate_activated',
            event_id: eventId,
            timestamp: new Date().toISOString(),
            status: 'success',
            data: { mandate_reference: `mdt_${eventId}`, customer_email: 'bench@example.com' },
          });
          const headers = { ...signSync(body), 'Content-Type': 'application/json' };
          return { ...request, headers: { ...request.headers, ...headers }, body };
        },
      },
    ],
  };
}

/**
 * What the gateway sends upstream for {@link gatewayGet}, for a pass-through floor: the
 * same signed GET, so the sandbox verifies and looks up as much as for the gateway. One
 * signature per run (good for 300 s), like the gateway's case, the headers fixed.
 */
export async function floorGet(floor: string): Promise<autocannon.Options> {
  return {
    url: `${floor}${VERIFY_PATH}`,
    headers: { ...(await signRequest({ ...CREDENTIALS, body: '' })) },
  };
}

/**
 * What the gateway sends upstream for {@link gatewayPost}, for a pass-through floor: the
 * same transfer with a new reference, signed as it is sent (never from a pool that a fast
 * floor could empty).
 */
export function floorPost(floor: string): autocannon.Options {
  return {
    url: `${floor}${POST_PATH}`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => {
          const body = transfer(nextReference('floor'));
          return { ...request, headers: { ...request.headers, ...signSync(body) }, body };
        },
      },
    ],
  };
}
