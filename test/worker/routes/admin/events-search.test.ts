/**
 * Prefix search (`reference_prefix=`, `event_id_prefix=`) and the amount and currency of money
 * events in `GET /admin/events`, through the real Worker and D1. Each test stores references
 * and ids under a prefix of its own, so other tests' events never match.
 */
import { describe, expect, it } from 'vitest';
import { prefixRange } from '../../../../worker/db/admin-queries.ts';
import { fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { storeEvent } from '../../relay/delivery-helpers.ts';
import { adminRequest, type EventSummary, expectValidationFailed } from './admin-helpers.ts';

useCapturedLogs();

/** An event as the list shows it, with the amount of a money event. */
interface ListedEvent extends EventSummary {
  amount: number | null;
  currency: string | null;
}

async function list(query: string): Promise<Response> {
  return fetchGateway(adminRequest('GET', `/admin/events?${query}`));
}

async function listed(query: string): Promise<ListedEvent[]> {
  const res = await list(query);
  const json = (await res.json()) as { data: ListedEvent[] };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data;
}

const T0 = Date.parse('2026-05-01T00:00:00.000Z');

/** Stores one event per reference (in order, one millisecond apart); returns their ids. */
async function storeReferences(references: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const [index, reference] of references.entries()) {
    const stored = await storeEvent('charge_success', {
      receivedAt: T0 + index,
      data: { reference, amount: 1, currency: 'NGN' },
    });
    ids.set(reference, stored.eventId);
  }
  return ids;
}

/** Expects a 400 `validation_failed` whose one issue is `message` at `path`. */
async function expectRefused(query: string, path: string, message: string): Promise<void> {
  const res = await list(query);
  const issues = ((await res.clone().json()) as { issues?: { message: string }[] }).issues;
  await expectValidationFailed(res, [path]);
  expect(issues?.[0]?.message).toBe(message);
}

/** The references listed for `query`, newest first. */
async function referencesFor(query: string): Promise<(string | null)[]> {
  return (await listed(query)).map((event) => event.reference);
}

describe('admin events API: search and amounts', () => {
  describe('GET /admin/events?reference_prefix=', () => {
    it('should list the events whose reference starts with the prefix, newest first', async () => {
      const base = `pfx_${crypto.randomUUID()}`;
      await storeReferences([base, `${base}_a`, `${base}_b`, `x${base}`, `${base.slice(0, -1)}`]);
      expect(await referencesFor(`reference_prefix=${base}`)).toEqual([
        `${base}_b`,
        `${base}_a`,
        base,
      ]);
      expect(await referencesFor(`reference_prefix=${base}_a`)).toEqual([`${base}_a`]);
    });

    it('should match case-sensitively, as the exact reference does', async () => {
      const base = `case_${crypto.randomUUID()}`;
      await storeReferences([`${base}_order`, `${base}_ORDER`, `${base}_Order`]);
      expect(await referencesFor(`reference_prefix=${base}_o`)).toEqual([`${base}_order`]);
      expect(await referencesFor(`reference_prefix=${base}_O`)).toEqual([
        `${base}_Order`,
        `${base}_ORDER`,
      ]);
    });

    it('should hold at the end of the alphabet and past it', async () => {
      const base = `end_${crypto.randomUUID()}`;
      // '{' follows 'z' and '~' follows '}': the bounds of `z` and `~` prefixes.
      await storeReferences([
        `${base}y`,
        `${base}z`,
        `${base}zz`,
        `${base}{`,
        `${base}~`,
        `${base}~~`,
      ]);
      expect(await referencesFor(`reference_prefix=${base}z`)).toEqual([`${base}zz`, `${base}z`]);
      expect(await referencesFor(`reference_prefix=${base}~`)).toEqual([`${base}~~`, `${base}~`]);
      const maxChar = String.fromCodePoint(0x10ffff);
      await storeReferences([`${base}${maxChar}`, `${base}${maxChar}1`, `${base}\u00e9`]);
      expect(await referencesFor(`reference_prefix=${encodeURIComponent(base + maxChar)}`)).toEqual(
        [`${base}${maxChar}1`, `${base}${maxChar}`],
      );
    });

    it('should page a prefix search without gaps or repeats', async () => {
      const base = `page_${crypto.randomUUID()}`;
      const references = Array.from({ length: 5 }, (_, i) => `${base}_${i}`);
      await storeReferences(references);
      const first = await list(`reference_prefix=${base}&page_size=3`);
      const page = (await first.json()) as { data: ListedEvent[]; next_cursor: string };
      const second = await listed(
        `reference_prefix=${base}&page_size=3&cursor=${page.next_cursor}`,
      );
      expect([...page.data, ...second].map((e) => e.reference)).toEqual(references.reverse());
    });

    it.each([
      ['reference_prefix=', 'Expected a non-empty string'],
      [`reference_prefix=${'r'.repeat(256)}`, 'Expected at most 255 characters'],
    ])('should refuse %s with 400 validation_failed: %s', async (query, message) => {
      await expectRefused(query, 'reference_prefix', message);
    });
  });

  describe('GET /admin/events?event_id_prefix=', () => {
    it('should list the events whose id starts with the prefix, up to the last visible character', async () => {
      const base = `evt_${crypto.randomUUID()}`;
      const stored: string[] = [];
      for (const [index, suffix] of ['', 'a', 'A', 'z', '~', '~~', '}'].entries()) {
        await storeEvent('mandate_activated', {
          eventId: `${base}${suffix}`,
          receivedAt: T0 + index,
        });
        stored.push(`${base}${suffix}`);
      }
      const ids = async (prefix: string) =>
        (await listed(`event_id_prefix=${encodeURIComponent(prefix)}`)).map((e) => e.event_id);
      expect(await ids(base)).toEqual([...stored].reverse());
      expect(await ids(`${base}a`)).toEqual([`${base}a`]);
      expect(await ids(`${base}~`)).toEqual([`${base}~~`, `${base}~`]);
      expect(await ids(`${base}z`)).toEqual([`${base}z`]);
    });

    it.each(['event_id_prefix=', 'event_id_prefix=evt%201', `event_id_prefix=${'e'.repeat(256)}`])(
      'should refuse %s with 400 validation_failed',
      async (query) => {
        await expectRefused(query, 'event_id_prefix', 'Expected 1 to 255 visible ASCII characters');
      },
    );
  });

  describe('prefixRange', () => {
    it.each([
      ['pay_', 'pay`'],
      ['pay_z', 'pay_{'],
      ['a~', 'a\x7f'],
      [`a${String.fromCodePoint(0x10ffff)}`, 'b'],
      ['\ud7ff', '\ue000'],
      [String.fromCodePoint(0x1f600), String.fromCodePoint(0x1f601)],
    ])('should bound %j below %j', (prefix, before) => {
      expect(prefixRange(prefix)).toEqual({ from: prefix, before });
    });

    it('should leave a prefix of only U+10FFFF without an upper bound, and no prefix without either', () => {
      const max = String.fromCodePoint(0x10ffff);
      expect(prefixRange(max + max)).toEqual({ from: max + max, before: null });
      expect(prefixRange(null)).toEqual({ from: null, before: null });
    });
  });

  describe('amount and currency', () => {
    it.each([
      ['charge_success', { reference: 'a', amount: 25000, currency: 'NGN' }, 25000, 'NGN'],
      ['disbursement_success', { reference: 'b', amount: 5000.5, currency: 'GHS' }, 5000.5, 'GHS'],
      ['direct_debit_success', debit(1200.13), 1200.13, null],
      ['direct_debit_failure', debit(10), null, null],
      ['refund_success', { refund_reference: 'r', amount: 10, currency: 'NGN' }, null, null],
      ['charge_success', { reference: 'c', amount: '100', currency: 'NGN' }, null, null],
      ['charge_success', { reference: 'd', amount: 0.001, currency: 'NGN' }, null, 'NGN'],
    ])(
      'should show %s with data %j as amount %j, currency %j',
      async (type, data, amount, currency) => {
        const { eventId } = await storeEvent(type, { data });
        const [event] = await listed(`event_id_prefix=${eventId}`);
        expect(event).toMatchObject({ event_id: eventId, amount, currency });
        const detail = await fetchGateway(adminRequest('GET', `/admin/events/${eventId}`));
        expect(((await detail.json()) as { data: ListedEvent }).data).toMatchObject({
          amount,
          currency,
        });
      },
    );
  });
});

function debit(amount: number) {
  return {
    payment_reference: `dd_${crypto.randomUUID()}`,
    mandate_reference: 'mnd_1',
    debit_amount: amount,
    status: 'success',
  };
}
