/**
 * An in-flight claim past its retention, through the real gateway, its real key objects and the real
 * sandbox: a worker died after sending a transfer, and the client retries after the key's
 * retention ended. The retry must look the transfer up, never send it again blind.
 */
import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../../worker/proxy/stages/idempotency.ts';
import {
  CALLER_NAME,
  createAtSandbox,
  fetchGateway,
  postJson,
  sandboxRequests,
  uniqueRequestId,
} from '../helpers.ts';
import { putIdempotencyKey } from '../idempotency-keys.ts';

const TRANSFER = '/disbursements/initialize';

function transferBody(): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: `exp-${crypto.randomUUID()}`,
    amount: 7.25,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  };
}

describe('idempotency stage: an in-flight claim past its retention', () => {
  it('should look the request up on a retry instead of sending it again', async () => {
    const body = transferBody();
    const raw = JSON.stringify(body);
    // The dead worker's transfer reached the payment service.
    await createAtSandbox(TRANSFER, body);
    // Its claim: locked long ago, retention over a minute ago.
    const key = crypto.randomUUID();
    const now = Date.now();
    await putIdempotencyKey({
      caller: CALLER_NAME,
      key,
      fingerprint: await requestFingerprint('POST', TRANSFER, new TextEncoder().encode(raw)),
      lockedUntil: now - 3_600_000,
      createdAt: now - 3_660_000,
      expiresAt: now - 60_000,
    });
    const requestId = uniqueRequestId();
    const res = await fetchGateway(
      postJson(TRANSFER, body, { requestId, headers: { 'Idempotency-Key': key } }),
    );
    const reached = (await sandboxRequests(requestId)).map((e) => `${e.method} ${e.path}`);
    expect(reached).toEqual([`GET /disbursements/verify/${body.reference}`]);
    expect(res.status).toBe(200);
    expect(res.headers.get('Idempotent-Recovered')).toBe('true');
  });
});
