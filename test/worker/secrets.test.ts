/**
 * Secrets and account numbers never leak: every secret the gateway holds or is sent (the
 * upstream secret, the caller and admin tokens, the webhook secret, the provider's
 * `X-Signature` values, subscription `whsec_` secrets) is driven through every route,
 * valid and invalid requests alike (wrong tokens, bad bodies, upstream errors, webhook
 * ingress, deliveries to the recording receiver, admin reads), and must appear in no log
 * line and no error body; a subscription secret appears in its create response only. Full
 * account numbers sent in bodies and webhook payloads appear in no log line (masked forms
 * such as `******7890` are fine).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { listEventDeliveries } from '../../worker/db/deliveries.ts';
import { ROUTES } from '../../worker/routes/table.ts';
import {
  CALLER_TOKEN,
  fetchGateway,
  gatewayRequest,
  postJson,
  useCapturedLogs,
} from './helpers.ts';
import { createReceiverSubscription, receivedUnder, runQueue } from './relay/delivery-helpers.ts';
import { ADMIN_TOKEN, adminRequest, createSubscription } from './routes/admin/admin-helpers.ts';
import { envelope, WEBHOOK_SECRET, webhookRequest } from './routes/webhook-helpers.ts';

const logs = useCapturedLogs();

/** The upstream secret of vitest.config.ts, and one the tests set to make the upstream refuse. */
const UPSTREAM_SECRET = 'sandbox-secret';
const WRONG_UPSTREAM_SECRET = 'wrong-upstream-secret-5f1c';
/** Account numbers sent in bodies and payloads: they may appear in logs only masked. */
const ACCOUNT_NUMBERS = ['4455667788', '99887766554433', '012345678901234567'];

/** Everything the requests of a test answered, for the checks at its end. */
interface Exchanges {
  /** Every body the gateway answered, with its status. */
  readonly answers: { status: number; text: string; what: string }[];
  /** Secrets that must appear in no log line and no error body. */
  readonly secrets: Set<string>;
  /** Subscription secrets: none in any response except `allowedIn`. */
  readonly subscriptionSecrets: Set<string>;
  /** The create responses allowed to hold a subscription secret. */
  readonly allowedIn: Set<string>;
}

function exchanges(): Exchanges {
  return {
    answers: [],
    secrets: new Set([
      UPSTREAM_SECRET,
      WRONG_UPSTREAM_SECRET,
      CALLER_TOKEN,
      ADMIN_TOKEN,
      WEBHOOK_SECRET,
    ]),
    subscriptionSecrets: new Set(),
    allowedIn: new Set(),
  };
}

/** Sends `request` and records the response. */
async function send(seen: Exchanges, request: Request, overrides: Partial<Env> = {}) {
  const signature = request.headers.get('X-Signature');
  if (signature !== null) seen.secrets.add(signature);
  const response = await fetchGateway(request, overrides);
  const text = await response.text();
  seen.answers.push({ status: response.status, text, what: `${request.method} ${request.url}` });
  return { status: response.status, text };
}

/** Asserts nothing leaked into the logs or error bodies of `seen`. */
function expectNoLeaks(seen: Exchanges) {
  const logText = logs.text();
  expect(logText.length).toBeGreaterThan(0);
  const secrets = [...seen.secrets, ...seen.subscriptionSecrets];
  for (const secret of secrets) {
    expect(logText.includes(secret), `log holds ${secret}`).toBe(false);
    for (const answer of seen.answers.filter((a) => a.status >= 400)) {
      expect(answer.text.includes(secret), `${answer.what} ${answer.status} holds ${secret}`).toBe(
        false,
      );
    }
  }
  for (const secret of seen.subscriptionSecrets) {
    for (const answer of seen.answers.filter((a) => !seen.allowedIn.has(a.text))) {
      expect(answer.text.includes(secret), `${answer.what} holds ${secret}`).toBe(false);
    }
  }
  for (const account of ACCOUNT_NUMBERS) {
    expect(logText.includes(account), `log holds ${account}`).toBe(false);
  }
}

const day = (offset: number) =>
  new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const unique = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

/** Proxied requests carrying account numbers: valid ones and invalid ones. */
function proxiedRequests(): Request[] {
  const [ten, fourteen, eighteen] = ACCOUNT_NUMBERS as [string, string, string];
  const transfer = {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: unique('tr'),
    amount: 10,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: ten,
  };
  return [
    postJson('/disbursements/initialize', transfer),
    postJson('/disbursements/initialize', {
      ...transfer,
      amount: 'ten',
      destination_bank_account: `${ten}x`,
    }),
    postJson('/direct-debits/disburse', {
      reference: unique('db'),
      amount: 1,
      currency: 'NGN',
      destination_bank_code: '058',
      destination_bank_account: fourteen,
    }),
    postJson('/direct-debits/mandates', {
      customer_name: 'Ada Obi',
      customer_email: 'ada@example.com',
      account_number: eighteen,
      bank_code: '058',
      start_date: day(2),
      end_date: day(60),
      monthly_amount: 100,
      monthly_debit_count: 2,
    }),
    postJson('/refunds/initialize', {
      payment_reference: unique('missing'),
      refund_reference: unique('rf'),
      currency: 'NGN',
      amount: 1,
      account_number: ten,
      bank_code: '058',
    }),
    postJson('/banks/resolve', { bank: '058', account: fourteen, currency: 'NGN' }),
    postJson('/banks/resolve', { bank: '058', account: `${fourteen}${fourteen}`, currency: 'NGN' }),
    gatewayRequest(`/payments/verify/${ten}`),
    gatewayRequest(`/merchants/disbursements?customer_email=${eighteen}`),
  ];
}

describe('secrets', () => {
  describe('signing proxy', () => {
    it('should keep secrets out of logs and error bodies, and account numbers out of logs', async () => {
      const seen = exchanges();
      for (const request of proxiedRequests()) await send(seen, request);
      // Upstream refusals and failures: a wrong upstream secret (401 upstream), no upstream.
      for (const request of proxiedRequests()) {
        await send(seen, request, { UPSTREAM_SECRET: WRONG_UPSTREAM_SECRET });
      }
      for (const request of proxiedRequests().slice(0, 3)) {
        await send(seen, request, {
          UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
          UPSTREAM_TIMEOUT_MS: '2000',
        });
      }
      // Wrong tokens: another namespace's, the secrets themselves, malformed.
      for (const token of [ADMIN_TOKEN, UPSTREAM_SECRET, `${CALLER_TOKEN}x`, 'Bearer']) {
        await send(seen, gatewayRequest('/payments/verify/ref-1', { token }));
        await send(seen, postJson('/disbursements/initialize', {}, { token }));
      }
      await send(
        seen,
        gatewayRequest('/payments/verify/ref-1', {
          headers: { Authorization: `Basic ${btoa(`u:${CALLER_TOKEN}`)}` },
          token: null,
        }),
      );
      expect(seen.answers.some((a) => a.status === 200)).toBe(true);
      expect(seen.answers.some((a) => a.status === 502)).toBe(true);
      expect(seen.answers.some((a) => a.status === 401)).toBe(true);
      expectNoLeaks(seen);
    });
  });

  describe('every route', () => {
    it('should leak nothing whatever secret or account number a route is sent', async () => {
      const seen = exchanges();
      const [account] = ACCOUNT_NUMBERS as [string];
      // Every secret in the body, an account number in every path parameter and field.
      const hostile = JSON.stringify({
        secrets: [...seen.secrets],
        account_number: account,
        destination_bank_account: account,
        account,
        url: `https://user:${UPSTREAM_SECRET}@example.com/${account}`,
      });
      for (const route of ROUTES) {
        const path = route.pattern.replace(/:\w+/g, account);
        const init = (token: string | null) => ({
          method: route.method,
          token,
          headers: {
            'Content-Type': 'application/json',
            'Idempotency-Key': `${account}-${crypto.randomUUID()}`,
            'X-Signature': WEBHOOK_SECRET,
            'CF-Connecting-IP': `secrets-${crypto.randomUUID()}`,
          },
          ...(route.method === 'GET' ? {} : { body: hostile }),
        });
        const right = route.auth === 'admin' ? ADMIN_TOKEN : CALLER_TOKEN;
        for (const token of [right, UPSTREAM_SECRET, WEBHOOK_SECRET, `${right}x`]) {
          await send(seen, gatewayRequest(path, init(token)));
        }
        await send(seen, gatewayRequest(path, init(right)), { UPSTREAM_SECRET: '' });
      }
      expect(new Set(seen.answers.map((a) => a.status)).size).toBeGreaterThan(3);
      expectNoLeaks(seen);
    });
  });

  describe('webhook relay', () => {
    it('should keep signatures, secrets and account numbers out of logs and error bodies', async () => {
      const seen = exchanges();
      const { key, subscription } = await createReceiverSubscription({
        eventTypes: ['disbursement_success'],
      });
      seen.subscriptionSecrets.add(subscription.secret);
      const event = envelope({
        event_type: 'disbursement_success',
        data: {
          reference: 'tr_1',
          amount: 10,
          destination_bank_account: ACCOUNT_NUMBERS[0],
          account_number: ACCOUNT_NUMBERS[1],
        },
      });
      const body = JSON.stringify(event);
      expect((await send(seen, await webhookRequest(body))).status).toBe(200);
      // Repeated, wrongly signed, tampered, unsigned and refused envelopes.
      await send(seen, await webhookRequest(body));
      await send(seen, await webhookRequest(body, { secret: 'not-the-webhook-secret' }));
      await send(seen, await webhookRequest(body, { sentBody: `${body} ` }));
      await send(seen, await webhookRequest(body, { secret: null }));
      await send(seen, await webhookRequest(JSON.stringify({ ...event, event_id: 7 })));
      await send(
        seen,
        await webhookRequest(
          JSON.stringify(
            envelope({
              event_type: 'charge_success',
              data: { reference: ACCOUNT_NUMBERS[2], amount: 1 },
            }),
          ),
        ),
        { CONFIRM_MONEY_EVENTS: 'true' },
      );
      // The delivery to the recording receiver, through the real queue handler.
      const [delivery] = await listEventDeliveries(env.DB, String(event.event_id));
      expect(delivery).toBeDefined();
      await runQueue('edgepay-deliveries', [{ body: { deliveryId: delivery?.id } }]);
      expect(await receivedUnder(key)).toHaveLength(1);
      // A failing subscriber: its response is recorded, never logged with a secret.
      const failing = await createReceiverSubscription({
        eventTypes: ['disbursement_success'],
        query: { status: '500' },
      });
      seen.subscriptionSecrets.add(failing.subscription.secret);
      const second = envelope({
        event_type: 'disbursement_success',
        data: { destination_bank_account: ACCOUNT_NUMBERS[0] },
      });
      await send(seen, await webhookRequest(JSON.stringify(second)));
      const deliveries = await listEventDeliveries(env.DB, String(second.event_id));
      await runQueue(
        'edgepay-deliveries',
        deliveries.map((d) => ({ body: { deliveryId: d.id } })),
      );
      await send(
        seen,
        adminRequest('GET', `/admin/events/${encodeURIComponent(String(event.event_id))}`),
      );
      expectNoLeaks(seen);
    });
  });

  describe('admin API', () => {
    it('should show a subscription secret in its create answer only, and leak no secret', async () => {
      const seen = exchanges();
      const create = await send(
        seen,
        adminRequest('POST', '/admin/subscriptions', {
          json: { url: 'https://hooks.example.com/secrets' },
        }),
      );
      expect(create.status).toBe(201);
      seen.allowedIn.add(create.text);
      const { id, secret } = (JSON.parse(create.text) as { data: { id: string; secret: string } })
        .data;
      expect(secret).toMatch(/^whsec_/);
      seen.subscriptionSecrets.add(secret);
      const other = await createSubscription({ enabled: false });
      seen.subscriptionSecrets.add(other.secret ?? '');
      await send(seen, adminRequest('GET', '/admin/subscriptions'));
      await send(seen, adminRequest('GET', `/admin/subscriptions/${id}`));
      await send(
        seen,
        adminRequest('PATCH', `/admin/subscriptions/${id}`, { json: { description: 'changed' } }),
      );
      await send(seen, adminRequest('PATCH', `/admin/subscriptions/${id}`, { json: { secret } }));
      await send(
        seen,
        adminRequest('PATCH', `/admin/subscriptions/${id}`, {
          // Encoded: a raw secret may hold `/`, which would end the URL's authority early.
          json: { url: `https://${encodeURIComponent(secret)}@hooks.example.com/` },
        }),
      );
      await send(
        seen,
        adminRequest('POST', '/admin/subscriptions', {
          json: { url: `https://user:${ADMIN_TOKEN}@hooks.example.com/` },
        }),
      );
      await send(seen, adminRequest('GET', '/admin/events?cursor=bad'));
      await send(seen, adminRequest('GET', '/admin/deliveries/counts'));
      for (const token of [CALLER_TOKEN, UPSTREAM_SECRET, `${ADMIN_TOKEN}x`, secret]) {
        await send(seen, adminRequest('GET', '/admin/subscriptions', { token }));
        await send(
          seen,
          adminRequest('POST', `/admin/subscriptions/${id}/rotate-secret`, { token }),
        );
      }
      await send(seen, adminRequest('DELETE', `/admin/subscriptions/${id}`));
      await send(seen, adminRequest('GET', `/admin/subscriptions/${id}`));
      expect(seen.answers.filter((a) => a.status === 401)).toHaveLength(8);
      expectNoLeaks(seen);
    });
  });
});
