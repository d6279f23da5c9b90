// Pagination and filters of the spec's list endpoints (spec: Limits).
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
export function paginate<T>(items: T[], page: number, pageSize: number): Page<T> {
  const start = (page - 1) * pageSize;
  return { total: items.length, page, pageSize, items: items.slice(start, start + pageSize) };
}

/**
 * A predicate on created time (epoch ms) from inclusive `start_date`/`end_date` bounds,
 * written as `YYYY-MM-DD` (whole days, UTC) or ISO date-times (see `parseInstant`).
 *
 * @param startDate - inclusive lower bound, or undefined.
 * @param endDate - inclusive upper bound, or undefined.
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
