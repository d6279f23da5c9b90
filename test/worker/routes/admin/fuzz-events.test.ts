/**
 * Fuzzing the admin API's events and deliveries: `GET /admin/events` filters and
 * cursors (arbitrary names and values, repeated names, bad escapes, forged cursors),
 * event ids in paths (stored ones with odd characters included), replay bodies, delivery
 * ids in `POST /admin/deliveries/:id/retry` and junk on `GET /admin/deliveries/counts`.
 * Never a 500; every error is the error body.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_DELIVERIES_PATH } from '../../../../worker/routes/admin/deliveries.ts';
import { ADMIN_EVENTS_PATH } from '../../../../worker/routes/admin/events.ts';
import {
  anyJsonText,
  anyString,
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  pathParam,
  percentEncode,
  queryString,
  REFUSAL_CODES,
  useFuzzTally,
} from '../../fuzz-helpers.ts';
import { captureLogs, fetchGateway, gatewayRequest } from '../../helpers.ts';
import { createReceiverSubscription, storeDelivery } from '../../relay/delivery-helpers.ts';
import { envelope, webhookRequest } from '../webhook-helpers.ts';
import { ADMIN_TOKEN, adminRequest } from './admin-helpers.ts';

const tally = useFuzzTally('admin events and deliveries');

/** Stored events, deliveries, subscriptions and a page cursor, filled before the cases. */
const stored = {
  eventIds: [] as string[],
  deliveryIds: [] as string[],
  subscriptionIds: [] as string[],
  cursors: [] as string[],
};

/** Ids with characters a path must carry encoded. */
const ODD_EVENT_IDS = [
  'evt with space',
  'evt/slash',
  'evt%25percent',
  'évt-unicode',
  'evt?query#hash',
  'evt..',
  '..',
];

beforeAll(async () => {
  // The setup's own requests log too; the cases check theirs.
  captureLogs();
  for (const id of ODD_EVENT_IDS) {
    const res = await fetchGateway(
      await webhookRequest(
        JSON.stringify(envelope({ event_id: id, event_type: 'refund_processed' })),
      ),
    );
    if (res.status === 200) stored.eventIds.push(id);
  }
  for (let i = 0; i < 3; i++) {
    const delivery = await storeDelivery();
    stored.eventIds.push(delivery.eventId);
    stored.deliveryIds.push(delivery.deliveryId);
    stored.subscriptionIds.push(delivery.subscription.id);
  }
  stored.subscriptionIds.push(
    (await createReceiverSubscription({ enabled: false })).subscription.id,
  );
  const page = await fetchGateway(adminRequest('GET', `${ADMIN_EVENTS_PATH}?page_size=1`));
  const cursor = ((await page.json()) as { next_cursor: string | null }).next_cursor;
  if (cursor !== null) stored.cursors.push(cursor);
  vi.restoreAllMocks();
});

/** A stored id (percent-encoded) or an arbitrary path segment. */
const idSegment = (ids: () => readonly string[]) =>
  fc.oneof(
    {
      weight: 1,
      arbitrary: fc
        .nat()
        .map((n) => ids()[n % Math.max(1, ids().length)] ?? 'none')
        .map(percentEncode),
    },
    { weight: 9, arbitrary: pathParam },
  );

const FILTER_VALUES = fc.oneof(
  fc.constantFrom(
    'received',
    'confirmed',
    'unconfirmed',
    'refund_processed',
    '1',
    '100',
    '101',
    '0',
    '2030-01-01T00:00:00Z',
    '2030-01-01',
    '2030-02-30T00:00:00Z',
    'MTIzOmV2dA',
    '9999999999999999:x',
    btoa('1:evt'),
  ),
  fc.constant(null).map(() => stored.cursors[0] ?? ''),
  fc
    .uint8Array({ maxLength: 40 })
    .map((bytes) => btoa(String.fromCharCode(...bytes)).replace(/=+$/, '')),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), anyString).map(([ms, id]) => {
    const bytes = new TextEncoder().encode(`${ms}:${id}`);
    return btoa(String.fromCharCode(...bytes))
      .replaceAll('+', '-')
      .replaceAll('/', '_')
      .replace(/=+$/, '');
  }),
);

describe('fuzz: admin events and deliveries', () => {
  it('should list events or refuse the query, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const names = ['event_type', 'status', 'from', 'to', 'page_size', 'cursor'];
    await fc.assert(
      fc.asyncProperty(queryString(names, FILTER_VALUES), async (query) => {
        const answer = await fuzzFetch(adminRequest('GET', `${ADMIN_EVENTS_PATH}?${query}`));
        tally.record('GET /admin/events query', answer.status);
        const why = `?${query} ${answer.status} ${JSON.stringify(answer.json)}`;
        if (answer.status === 200) {
          expect(Array.isArray(answer.json?.data), why).toBe(true);
          expect(
            answer.json?.next_cursor === null || typeof answer.json?.next_cursor === 'string',
            why,
          ).toBe(true);
        } else {
          expect({ status: answer.status, code: answer.json?.code }, why).toEqual({
            status: 400,
            code: 'validation_failed',
          });
        }
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should answer event ids in paths (get and replay), never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('', '/replay'),
        idSegment(() => stored.eventIds),
        async (suffix, id) => {
          const request = gatewayRequest(`${ADMIN_EVENTS_PATH}/${id}${suffix}`, {
            token: ADMIN_TOKEN,
            method: suffix === '' ? 'GET' : 'POST',
          });
          const answer = await fuzzFetch(request);
          tally.record('event ids', answer.status);
          // 409: a replay whose only matching subscription is the disabled one.
          expect(
            [200, 202, 400, 401, 404, 405, 409],
            `${request.url} ${JSON.stringify(answer.json)}`,
          ).toContain(answer.status);
        },
      ),
      FUZZ_PARAMETERS,
    );
  });

  it('should replay or refuse arbitrary replay bodies, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const body = fc.oneof(
      fc
        .oneof(
          fc.nat().map((n) => stored.subscriptionIds[n % stored.subscriptionIds.length] ?? ''),
          anyString,
        )
        .map((id) => JSON.stringify({ subscription_id: id })),
      anyJsonText,
    );
    const contentType = fc.option(
      fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', ''),
      { freq: 4, nil: 'application/json' },
    );
    await fc.assert(
      fc.asyncProperty(fc.nat(), body, contentType, async (n, text, type) => {
        const id = stored.eventIds[n % stored.eventIds.length] ?? '';
        const request = adminRequest('POST', `${ADMIN_EVENTS_PATH}/${percentEncode(id)}/replay`, {
          headers: { 'Content-Type': type },
          body: text,
        });
        const answer = await fuzzFetch(request);
        tally.record('replay bodies', answer.status);
        const why = `${id} ${type} ${text.slice(0, 200)} ${answer.status} ${JSON.stringify(answer.json)}`;
        if (answer.status === 202) return;
        const code = String(answer.json?.code);
        const refused = REFUSAL_CODES.has(code) || code === 'subscription_disabled';
        expect(answer.status === 404 || refused, why).toBe(true);
      }),
      FUZZ_PARAMETERS,
    );
  });

  it('should answer delivery ids and junk queries on the delivery routes, never 500', {
    timeout: fuzzTimeout(20),
  }, async () => {
    const retry = idSegment(() => stored.deliveryIds).map((id) => ({
      method: 'POST',
      path: `${ADMIN_DELIVERIES_PATH}/${id}/retry`,
    }));
    const counts = queryString(['status'], anyString).map((query) => ({
      method: 'GET',
      path: `${ADMIN_DELIVERIES_PATH}/counts?${query}`,
    }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(retry, counts), async ({ method, path }) => {
        const answer = await fuzzFetch(gatewayRequest(path, { token: ADMIN_TOKEN, method }));
        tally.record('delivery ids and counts', answer.status);
        expect(
          [200, 202, 400, 404, 405],
          `${method} ${path} ${JSON.stringify(answer.json)}`,
        ).toContain(answer.status);
      }),
      FUZZ_PARAMETERS,
    );
  });
});
