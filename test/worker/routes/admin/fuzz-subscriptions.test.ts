/**
 * Fuzzing the admin API's subscriptions: create and update bodies (hostile URLs:
 * private and metadata addresses, IPv4 inside IPv6, credentials, other schemes, very long;
 * wrong types, unknown fields) and subscription ids in paths. Never a 500; every error is
 * the error body; a created subscription comes with its `whsec_` secret.
 */
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SUBSCRIPTIONS_PATH } from '../../../../worker/routes/admin/subscriptions.ts';
import {
  anyJson,
  anyJsonText,
  anyString,
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  pathParam,
  percentEncode,
  REFUSAL_CODES,
  useFuzzTally,
} from '../../fuzz-helpers.ts';
import { gatewayRequest } from '../../helpers.ts';
import { ADMIN_TOKEN, adminRequest, createSubscription } from './admin-helpers.ts';

const tally = useFuzzTally('admin subscriptions');

const HOSTS = [
  'hooks.example.com',
  'hooks.example.com:8443',
  'hooks.example.com:443',
  'user:pass@hooks.example.com',
  '127.0.0.1',
  'localhost',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '100.64.0.1',
  '169.254.169.254',
  'metadata.google.internal',
  '0.0.0.0',
  '0x7f.1',
  '2130706433',
  '017700000001',
  '[::1]',
  '[::]',
  '[::ffff:10.0.0.1]',
  '[::ffff:7f00:1]',
  '[64:ff9b::a00:1]',
  '[fe80::1]',
  '[fc00::1]',
  '224.0.0.1',
  'xn--nxasmq6b.example',
  'bücher.example',
  'a'.repeat(300),
  '',
];

/** A subscription URL: valid, hostile or not a URL at all. */
const url = fc.oneof(
  { weight: 2, arbitrary: fc.constant('https://hooks.example.com/edgepay') },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          'https://',
          'http://',
          'HTTPS://',
          'ftp://',
          'javascript:',
          'data:',
          '//',
          'https:/',
        ),
        fc.constantFrom(...HOSTS),
        fc.oneof(
          fc.constant('/hook'),
          anyString.map(percentEncode).map((p) => `/${p}`),
          anyString,
        ),
      )
      .map(([scheme, host, path]) => `${scheme}${host}${path}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 2000, max: 2100 })
      .map((n) => `https://hooks.example.com/${'p'.repeat(n - 26)}`),
  },
  { weight: 1, arbitrary: anyJson },
);

/** A create or update body: the documented fields with hostile values, unknown fields. */
const subscriptionBody = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record(
        {
          url,
          event_types: fc.oneof(
            fc.constant(null),
            fc.array(fc.oneof(fc.constantFrom('charge_success', 'refund_processed'), anyString), {
              maxLength: 4,
            }),
            anyJson,
            fc.constant(Array.from({ length: 101 }, (_, i) => `t${i}`)),
          ),
          description: fc.oneof(
            fc.constant(null),
            anyString,
            anyJson,
            fc.constant('d'.repeat(501)),
          ),
          enabled: fc.oneof(fc.boolean(), anyJson),
          extra: fc.dictionary(
            fc.oneof(fc.constantFrom('secret', 'id', 'eventTypes', '__proto__'), anyString),
            anyJson,
            { maxKeys: 2 },
          ),
        },
        { requiredKeys: [] },
      )
      .map(({ extra, ...fields }) => JSON.stringify({ ...fields, ...extra })),
  },
  { weight: 1, arbitrary: anyJsonText },
);

let existing = '';

beforeAll(async () => {
  existing = (await createSubscription({ enabled: false })).id;
});

describe('fuzz: admin subscriptions', () => {
  it('should create or refuse arbitrary subscription bodies, never 500', {
    timeout: fuzzTimeout(60),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(subscriptionBody, async (body) => {
        const answer = await fuzzFetch(
          adminRequest('POST', ADMIN_SUBSCRIPTIONS_PATH, {
            headers: { 'Content-Type': 'application/json' },
            body,
          }),
        );
        tally.record('create bodies', answer.status);
        const why = `${body.slice(0, 300)} ${answer.status} ${JSON.stringify(answer.json)}`;
        if (answer.status !== 201) {
          expect(answer.status, why).toBe(400);
          expect(REFUSAL_CODES.has(String(answer.json?.code)), why).toBe(true);
          return;
        }
        const data = answer.json?.data as { id: string; url: string; secret: string };
        expect(data.secret, why).toMatch(/^whsec_/);
        expect(data.url, why).toMatch(/^https:\/\//);
        // Keeps the list short for the later cases.
        await env.DB.prepare('DELETE FROM subscriptions WHERE id = ?1').bind(data.id).run();
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should update or refuse arbitrary change bodies, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(subscriptionBody, async (body) => {
        const answer = await fuzzFetch(
          adminRequest('PATCH', `${ADMIN_SUBSCRIPTIONS_PATH}/${existing}`, {
            headers: { 'Content-Type': 'application/json' },
            body,
          }),
        );
        tally.record('update bodies', answer.status);
        const why = `${body.slice(0, 300)} ${answer.status} ${JSON.stringify(answer.json)}`;
        if (answer.status === 200) {
          expect((answer.json?.data as { id?: string } | undefined)?.id, why).toBe(existing);
          expect(answer.json?.data, why).not.toHaveProperty('secret');
        } else {
          expect(
            { status: answer.status, refused: REFUSAL_CODES.has(String(answer.json?.code)) },
            why,
          ).toEqual({ status: 400, refused: true });
        }
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should answer arbitrary subscription ids in paths with 404, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const routes = [
      { method: 'GET', suffix: '' },
      { method: 'PATCH', suffix: '' },
      { method: 'DELETE', suffix: '' },
      { method: 'POST', suffix: '/rotate-secret' },
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), pathParam, async ({ method, suffix }, id) => {
        const request = gatewayRequest(`${ADMIN_SUBSCRIPTIONS_PATH}/${id}${suffix}`, {
          token: ADMIN_TOKEN,
          method,
          ...(method === 'PATCH'
            ? { headers: { 'Content-Type': 'application/json' }, body: '{"enabled":false}' }
            : {}),
        });
        const answer = await fuzzFetch(request);
        tally.record('subscription ids', answer.status);
        const pathname = new URL(request.url).pathname;
        if (new RegExp(`^${ADMIN_SUBSCRIPTIONS_PATH}/[^/]+${suffix}$`).test(pathname)) {
          expect(
            answer.status,
            `${method} ${pathname} ${JSON.stringify(answer.json)}`,
          ).toBeGreaterThanOrEqual(400);
        }
      }),
      FUZZ_PARAMETERS,
    );
  });
});
