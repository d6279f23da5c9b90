/**
 * Fuzzing the webhook ingress, `POST /webhooks`: arbitrary JSON and mutated envelopes
 * (odd `event_id` and `event_type`: newlines, spaces, Unicode, 255 and 256 characters,
 * wrong types), signed with the test `WEBHOOK_SECRET` so they pass the signature check,
 * money events confirmed upstream; and unsigned, badly signed, stale and tampered ones.
 * Never a 500; every error is the error body; an acknowledged event is stored byte for byte.
 */

import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { findWebhookEvent } from '../../../worker/db/webhook-events.ts';
import { WebhookEnvelopeSchema } from '../../../worker/relay/envelope.ts';
import {
  anyJson,
  anyJsonText,
  anyString,
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  numberLiteral,
  useFuzzTally,
} from '../fuzz-helpers.ts';
import { envelope, unixNow, webhookRequest } from './webhook-helpers.ts';

const tally = useFuzzTally('POST /webhooks');
const MONEY_EVENTS = [
  'charge_success',
  'disbursement_success',
  'direct_debit_success',
  'direct_debit_failure',
];

/** An `event_id` or `event_type`: fresh and plain, or hostile. */
const eventKey = (prefix: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(null).map(() => `${prefix}_${crypto.randomUUID()}`) },
    { weight: 3, arbitrary: anyString.map((text) => `${prefix}_${crypto.randomUUID()}${text}`) },
    { weight: 1, arbitrary: anyString },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1, max: 300 })
        .map((n) => `${prefix}${'x'.repeat(n)}`.slice(0, n)),
    },
    { weight: 1, arbitrary: anyJson },
  );

/** A spec envelope with fields replaced by hostile values, dropped or added. */
const nearlyValidEnvelope = fc
  .record({
    event_id: eventKey('evt'),
    event_type: fc.oneof(
      fc.constantFrom('refund_processed', 'mandate_created', ...MONEY_EVENTS),
      eventKey('type'),
    ),
    timestamp: fc.oneof(
      { weight: 4, arbitrary: fc.constant('2030-01-01T00:00:00.000Z') },
      anyString,
      anyJson,
    ),
    data: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      fc.record({
        reference: fc.oneof(fc.constant('pay_1'), anyString),
        amount: fc.oneof(fc.integer(), numberLiteral.map(Number), anyJson),
      }),
      anyJson,
    ),
    status: fc.option(anyJson, { freq: 4, nil: undefined }),
    extra: fc.dictionary(anyString, anyJson, { maxKeys: 2 }),
    drop: fc.oneof(
      { weight: 4, arbitrary: fc.constant([]) },
      {
        weight: 1,
        arbitrary: fc.subarray([
          'event_id',
          'event_type',
          'timestamp',
          'data',
          'status',
          'message',
        ]),
      },
    ),
  })
  .map(({ extra, drop, ...fields }) => {
    const body: Record<string, unknown> = { ...envelope(), ...extra };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
    for (const key of drop) delete body[key];
    return JSON.stringify(body);
  });

/** Whether the ingress should acknowledge `text`: an object the envelope schema accepts. */
function acceptedEnvelope(text: string): v.InferOutput<typeof WebhookEnvelopeSchema> | undefined {
  try {
    const result = v.safeParse(WebhookEnvelopeSchema, JSON.parse(text));
    return result.success ? result.output : undefined;
  } catch {
    return undefined;
  }
}

/** Sends a signed `text` and checks the acknowledgement or refusal it deserves. */
async function expectSignedJudged(property: string, text: string, confirm: boolean) {
  const request = await webhookRequest(text);
  const answer = await fuzzFetch(request, {
    env: confirm ? { CONFIRM_MONEY_EVENTS: 'true' } : {},
    // A money event the upstream cannot confirm is refused with 503 (documented).
    allowed5xx: confirm ? [503] : [],
  });
  tally.record(property, answer.status);
  const why = `${text.slice(0, 300)} ${answer.status} ${JSON.stringify(answer.json)}`;
  const accepted = acceptedEnvelope(text);
  if (accepted === undefined) {
    expect({ status: answer.status, code: answer.json?.code }, why).toEqual({
      status: 400,
      code: 'validation_failed',
    });
    return;
  }
  if (answer.status === 503) return;
  expect(answer.status, why).toBe(200);
  expect(answer.json, why).toEqual({
    status: 'success',
    event_id: accepted.event_id,
    duplicate: expect.any(Boolean),
  });
  const stored = await findWebhookEvent(env.DB, accepted.event_id);
  expect(stored?.rawBody, why).toBeDefined();
  if (answer.json?.duplicate === false) expect(stored?.rawBody, why).toBe(text);
}

describe('fuzz: POST /webhooks', () => {
  it('should refuse signed arbitrary JSON that is not an envelope, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(anyJsonText, async (text) => {
        await expectSignedJudged('signed arbitrary JSON', text, false);
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should store signed envelopes with odd fields or refuse them, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      // One case in 20 has money events confirmed upstream (the sandbox over HTTP).
      fc.asyncProperty(nearlyValidEnvelope, fc.nat(19), async (text, dice) => {
        await expectSignedJudged('signed mutated envelopes', text, dice === 0);
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should refuse unsigned, badly signed, stale and tampered webhooks with 401, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const visible = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 80,
    });
    const forgery = fc.oneof(
      fc.constant({ secret: null }),
      fc
        .constantFrom('sandbox-secret ', 'SANDBOX-SECRET', 'test-gateway-token')
        .map((secret) => ({ secret })),
      fc
        .oneof(fc.integer({ min: 301, max: 10 ** 9 }), fc.integer({ min: -(10 ** 9), max: -301 }))
        .map((skew) => ({ timestamp: unixNow() + skew })),
      fc.record({ 'X-Signature': visible }).map((headers) => ({ headers })),
      fc
        .record({
          'X-Timestamp': fc.oneof(
            visible,
            fc.constantFrom('1e3', '-0', ' 1', '0x10', '99999999999999'),
          ),
        })
        .map((headers) => ({ headers })),
      visible.map((suffix) => ({ tamper: suffix })),
    );
    await fc.assert(
      fc.asyncProperty(nearlyValidEnvelope, forgery, async (text, how) => {
        const { tamper, ...init } = how as { tamper?: string; secret?: string | null };
        const request = await webhookRequest(text, {
          ...init,
          ...(tamper === undefined ? {} : { sentBody: `${text}${tamper} ` }),
        });
        const answer = await fuzzFetch(request);
        tally.record('unsigned and badly signed', answer.status);
        const why = `${JSON.stringify(how)} ${answer.status} ${JSON.stringify(answer.json)}`;
        // An X-Timestamp override may still be the signing second (visible strings rarely are).
        if (answer.status === 200) {
          expect(how, why).toMatchObject({ headers: { 'X-Timestamp': expect.any(String) } });
          return;
        }
        expect({ status: answer.status, code: answer.json?.code }, why).toEqual({
          status: 401,
          code: 'invalid_signature',
        });
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should refuse every unsigned webhook (503) when WEBHOOK_SECRET is empty', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nearlyValidEnvelope, anyJsonText), async (text) => {
        const answer = await fuzzFetch(await webhookRequest(text, { secret: null }), {
          env: { WEBHOOK_SECRET: '' },
          allowed5xx: [503],
        });
        tally.record('unsigned, WEBHOOK_SECRET empty', answer.status);
        // Closed without the secret, whatever is sent, unless unsigned ones are allowed.
        expect({ status: answer.status, code: answer.json?.code }, text.slice(0, 200)).toEqual({
          status: 503,
          code: 'configuration_error',
        });
      }),
      { numRuns: Math.max(1, Math.floor(FUZZ_PARAMETERS.numRuns / 10)) },
    );
  });
});
