/**
 * The request schemas' cross-field rules (lib/schemas/common.ts `crossFieldCheck`) and the
 * calendar helpers they rest on, checked directly: the issue lands on the right field, every
 * other issue is still listed, and a rule never runs on fields that are already wrong.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { toIssues } from '../../../lib/internal/issues.ts';
import { RANGE_ORDER_MESSAGE } from '../../../lib/schemas/common.ts';
import { isCalendarDate } from '../../../lib/schemas/dates.ts';
import { CreateMandateRequestSchema } from '../../../lib/schemas/direct-debits.ts';
import { ListTransactionsQuerySchema } from '../../../lib/schemas/payments.ts';
import { InitializeRefundRequestSchema } from '../../../lib/schemas/refunds.ts';

function issuesOf(schema: v.GenericSchema, input: unknown) {
  const result = v.safeParse(schema, input);
  return result.success ? [] : toIssues(result.issues);
}

const refund = {
  payment_reference: 'pay_1',
  refund_reference: 'ref_1',
  currency: 'NGN',
  amount: '10.00',
};

describe('cross-field rules', () => {
  it('should report a range that ends before it starts on end_date', () => {
    const query = { start_date: '2025-02-01', end_date: '2025-01-31' };
    expect(issuesOf(ListTransactionsQuerySchema, query)).toEqual([
      { path: 'end_date', message: RANGE_ORDER_MESSAGE },
    ]);
  });

  it('should accept a range whose end is the same day, read as the whole day', () => {
    const query = { start_date: '2025-01-31T10:00:00Z', end_date: '2025-01-31' };
    expect(issuesOf(ListTransactionsQuerySchema, query)).toEqual([]);
  });

  it('should list the rule beside the issues of other fields', () => {
    const query = { start_date: '2025-02-01', end_date: '2025-01-31', page_size: '500' };
    expect(issuesOf(ListTransactionsQuerySchema, query).map((issue) => issue.path)).toEqual([
      'page_size',
      'end_date',
    ]);
  });

  it('should not run the rule when a field it reads is already wrong', () => {
    const query = { start_date: '2025-02-01', end_date: 'yesterday' };
    expect(issuesOf(ListTransactionsQuerySchema, query)).toEqual([
      { path: 'end_date', message: 'Expected an ISO 8601 date-time' },
    ]);
  });

  it('should report a missing bank_code on bank_code, and only when account_number is given', () => {
    expect(issuesOf(InitializeRefundRequestSchema, refund)).toEqual([]);
    expect(
      issuesOf(InitializeRefundRequestSchema, { ...refund, account_number: '0123456789' }),
    ).toEqual([{ path: 'bank_code', message: 'Required when account_number is given' }]);
  });

  it('should report a mandate shorter than 30 days on end_date', () => {
    const mandate = {
      customer_name: 'Ada',
      customer_email: 'ada@example.com',
      account_number: '0123456789',
      bank_code: '058',
      start_date: '2030-01-01',
      end_date: '2030-01-30',
      monthly_amount: '5000',
      monthly_debit_count: 1,
    };
    expect(issuesOf(CreateMandateRequestSchema, mandate).map((issue) => issue.path)).toEqual([
      'end_date',
    ]);
    expect(issuesOf(CreateMandateRequestSchema, { ...mandate, end_date: '2030-01-31' })).toEqual(
      [],
    );
  });

  it('should answer any input with issues, never an exception', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        issuesOf(ListTransactionsQuerySchema, input);
        issuesOf(InitializeRefundRequestSchema, input);
        issuesOf(CreateMandateRequestSchema, input);
      }),
    );
  });
});

describe('isCalendarDate', () => {
  // An oracle that shares nothing with the implementation: days per month by the rule.
  const daysIn = (year: number, month: number) =>
    month === 2
      ? (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
        ? 29
        : 28
      : [4, 6, 9, 11].includes(month)
        ? 30
        : 31;

  it('should accept exactly the real days of the Gregorian calendar', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        (year, month, day) => {
          const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          const real = month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
          expect(isCalendarDate(text)).toBe(real);
        },
      ),
    );
  });

  it('should refuse other spellings', () => {
    for (const text of ['2025-1-01', '2025-01-01T00:00:00Z', ' 2025-01-01', '20250101', '']) {
      expect(isCalendarDate(text), text).toBe(false);
    }
  });
});
