// Pagination and filters of the spec's list endpoints (docs/payments-api.md, "Limits").
import { parseInstant } from '../schemas/dates.ts';

/** One page of a list, with the total across all pages. */
export interface Page<T> {
  total: number;
  page: number;
  pageSize: number;
  items: T[];
}

/**
 * Records newest first: by created time descending, later insertion first on ties.
 *
 * @param records - records in insertion order.
 */
export function newestFirst<T extends { createdAt: number }>(records: Iterable<T>): T[] {
  return [...records].reverse().sort((a, b) => b.createdAt - a.createdAt);
}

/**
 * Cuts one page out of filtered records.
 *
 * @param items - every matching record, already ordered.
 * @param page - 1-based page number.
 * @param pageSize - records per page.
 */
function paginate<T>(items: T[], page: number, pageSize: number): Page<T> {
  const start = (page - 1) * pageSize;
  return { total: items.length, page, pageSize, items: items.slice(start, start + pageSize) };
}

/** The query fields every list endpoint shares: inclusive dates and paging (docs/payments-api.md, "Limits"). */
export interface ListQuery {
  start_date?: string | undefined;
  end_date?: string | undefined;
  page: number;
  page_size: number;
}

/**
 * One page of a list endpoint: `records` newest first, kept when created within the
 * query's `start_date`..`end_date` and accepted by `matches`, cut to the query's page.
 *
 * @param records - every record of the kind, in insertion order.
 * @param query - the parsed list query.
 * @param matches - the endpoint's own filters (status, email, ...).
 */
export function listPage<T extends { createdAt: number }>(
  records: Iterable<T>,
  query: ListQuery,
  matches: (record: T) => boolean,
): Page<T> {
  const within = createdWithin(query.start_date, query.end_date);
  const kept = newestFirst(records).filter((record) => matches(record) && within(record.createdAt));
  return paginate(kept, query.page, query.page_size);
}

/**
 * The paging fields of a list answer, in the order the spec shows them.
 *
 * @returns `{ total, page, pageSize }`.
 */
export function pageFields(page: Page<unknown>): Omit<Page<unknown>, 'items'> {
  return { total: page.total, page: page.page, pageSize: page.pageSize };
}

/**
 * A predicate on created time (epoch ms) from inclusive `start_date`/`end_date` bounds,
 * written as `YYYY-MM-DD` (whole days, UTC) or ISO date-times (see `parseInstant`).
 *
 * @param startDate - inclusive lower bound, or undefined.
 * @param endDate - inclusive upper bound, or undefined.
 * @internal Exported for its test, which checks the date bounds without a sandbox.
 */
export function createdWithin(
  startDate: string | undefined,
  endDate: string | undefined,
): (createdAt: number) => boolean {
  const from = startDate === undefined ? undefined : parseInstant(startDate, 'start');
  const to = endDate === undefined ? undefined : parseInstant(endDate, 'end');
  return (createdAt) =>
    (from === undefined || createdAt >= from) && (to === undefined || createdAt <= to);
}

/**
 * Case-insensitive email equality (the sandbox treats emails case-insensitively).
 *
 * @param a - an email.
 * @param b - another email.
 */
export function sameEmail(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
