import { describe, expect, it } from 'vitest';
import { ResponseValidationError, SignatureVerificationError } from '../../lib/errors.ts';
import { signRequest } from '../../lib/signing.ts';
import { parseWebhookEvent, parseWebhookEventUnverified } from '../../lib/webhooks.ts';

const secret = 'sandbox-secret';
const NOW = 1_767_225_600_000;
const now = () => NOW;

const envelope = (event_type: string, data: Record<string, unknown>) =>
  JSON.stringify({
    event_type,
    status: 'success',
    message: 'ok',
    event_id: `evt_${event_type}`,
    timestamp: '2026-01-01T00:00:00Z',
    data,
  });

async function signed(body: string, timestampSec = NOW / 1000) {
  return {
    ...(await signRequest({ keyId: 'sandbox-key', secret, body, timestamp: timestampSec })),
  };
}

describe('parseWebhookEvent', () => {
  it('should type a charge_success event', async () => {
    const body = envelope('charge_success', {
      reference: 'order-1',
      amount: 25000.5,
      currency: 'NGN',
      metadata: { a: 1 },
    });
    const event = await parseWebhookEvent(body, await signed(body), { secret, now });
    expect(event.known).toBe(true);
    if (event.event_type !== 'charge_success') throw new Error('wrong type');
    expect(event.data.reference).toBe('order-1');
    expect(event.data.amount).toBe(25000.5);
    expect(event.event_id).toBe('evt_charge_success');
  });

  it('should type a direct_debit_success event and keep unknown fields', async () => {
    const body = envelope('direct_debit_success', {
      payment_reference: 'debit-1',
      mandate_reference: 'mnd-1',
      debit_amount: 100,
      status: 'success',
      extra: 'kept',
    });
    const event = await parseWebhookEvent(new TextEncoder().encode(body), await signed(body), {
      secret,
      now,
    });
    expect(event).toMatchObject({
      known: true,
      event_type: 'direct_debit_success',
      data: { extra: 'kept' },
    });
  });

  it('should pass unknown event types through as generic events', async () => {
    const body = envelope('refund_success', { refund_reference: 'rf-1' });
    const event = await parseWebhookEvent(body, await signed(body), { secret, now });
    expect(event).toMatchObject({
      known: false,
      event_type: 'refund_success',
      data: { refund_reference: 'rf-1' },
    });
  });

  it('should reject a tampered body with a hint about raw bodies', async () => {
    const body = envelope('charge_success', { reference: 'order-1', amount: 1, currency: 'NGN' });
    const headers = await signed(body);
    const error = await parseWebhookEvent(body.replace('order-1', 'order-2'), headers, {
      secret,
      now,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignatureVerificationError);
    expect((error as SignatureVerificationError).reason).toBe('signature_mismatch');
    expect((error as Error).message).toContain('raw body exactly as received');
  });

  it('should reject a stale or future timestamp beyond the tolerance', async () => {
    const body = envelope('charge_success', { reference: 'order-1', amount: 1, currency: 'NGN' });
    for (const skew of [-301, 301]) {
      const headers = await signed(body, NOW / 1000 + skew);
      const error = await parseWebhookEvent(body, headers, { secret, now }).catch(
        (e: unknown) => e,
      );
      expect((error as SignatureVerificationError).reason).toBe('timestamp_out_of_tolerance');
    }
    const headers = await signed(body, NOW / 1000 - 20);
    await expect(
      parseWebhookEvent(body, headers, { secret, now, toleranceSec: 10 }),
    ).rejects.toThrow(SignatureVerificationError);
  });

  it('should refuse a parsed object with a TypeError that says what to pass', async () => {
    const parsed = JSON.parse(envelope('charge_success', {})) as unknown as string;
    await expect(parseWebhookEvent(parsed, {}, { secret })).rejects.toThrow(/raw body as received/);
  });

  it('should reject a wrong envelope with every issue and the raw body', async () => {
    const body = JSON.stringify({ event_type: 'charge_success', data: { reference: 1 } });
    const error = (await parseWebhookEvent(body, await signed(body), { secret, now }).catch(
      (e: unknown) => e,
    )) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.rawBody).toBe(body);
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(
      ['data.amount', 'data.currency', 'data.reference', 'event_id', 'timestamp'].sort(),
    );
  });

  it('should reject a body that is not JSON', async () => {
    const body = 'not json';
    await expect(parseWebhookEvent(body, await signed(body), { secret, now })).rejects.toThrow(
      ResponseValidationError,
    );
  });

  describe('without a secret (fails closed)', () => {
    const body = envelope('charge_success', { reference: 'order-1', amount: 1, currency: 'NGN' });

    it.each([
      ['undefined', undefined],
      ['null', null],
      ['empty', ''],
    ])(
      'should throw a TypeError naming `secret` when it is %s, even for a signed event',
      async (_, missing) => {
        const error = await parseWebhookEvent(body, await signed(body), {
          secret: missing as string,
          now,
        }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toBe('`secret` is missing or empty');
      },
    );

    it('should throw a TypeError naming `secret` when no options are given', async () => {
      const untyped = parseWebhookEvent as (raw: string, headers: object) => Promise<unknown>;
      await expect(untyped(body, await signed(body))).rejects.toThrow(
        new TypeError('`secret` is missing or empty'),
      );
    });

    it('should refuse an unsigned body as well: no secret is never "no check"', async () => {
      await expect(
        parseWebhookEvent(body, {}, { secret: undefined as unknown as string }),
      ).rejects.toThrow(TypeError);
    });
  });
});

describe('parseWebhookEventUnverified', () => {
  it('should parse an unsigned body without any secret', () => {
    const body = envelope('charge_success', { reference: 'order-1', amount: 1, currency: 'NGN' });
    const event = parseWebhookEventUnverified(body);
    expect(event).toMatchObject({
      known: true,
      event_type: 'charge_success',
      data: { reference: 'order-1', amount: 1, currency: 'NGN' },
    });
  });

  it('should parse bytes and unknown types like parseWebhookEvent', () => {
    const body = envelope('refund_success', { refund_reference: 'rf-1' });
    expect(parseWebhookEventUnverified(new TextEncoder().encode(body))).toMatchObject({
      known: false,
      event_type: 'refund_success',
    });
  });

  it('should still validate the envelope', () => {
    const body = JSON.stringify({ event_type: 'charge_success', data: {} });
    expect(() => parseWebhookEventUnverified(body)).toThrow(ResponseValidationError);
    expect(() => parseWebhookEventUnverified('not json')).toThrow(ResponseValidationError);
  });

  it('should refuse a parsed object with a TypeError', () => {
    const parsed = JSON.parse(envelope('charge_success', {})) as unknown as string;
    expect(() => parseWebhookEventUnverified(parsed)).toThrow(/raw body as received/);
  });
});
