// Unwrapping the spec's response variants: the spec shows enveloped and flat forms of
// several answers, and list pages under `data.data`, `data.records` or the top level; the
// SDK returns one canonical shape per resource whichever form arrives.
import * as v from 'valibot';
import { type ErrorContext, ResponseValidationError } from '../errors.ts';
import { parseOrThrow } from '../internal/issues.ts';
import type { Page } from '../pagination.ts';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The raw answer being normalized, for error messages and `rawBody`. */
export interface RawResponse {
  body: unknown;
  rawBody: string;
  context: ErrorContext;
}

/**
 * The record of an enveloped (`{ status, message, data: {...} }`) or flat (`{ status,
 * message, ...fields }`) response. In the flat variant `status` is the record's own
 * state and `message` belongs to the envelope, so it is dropped.
 */
export function recordOf(body: unknown): unknown {
  if (!isObject(body)) return body;
  if (isObject(body.data)) return body.data;
  const { message: _message, ...record } = body;
  return record;
}

/**
 * The items of a response that is a bare array or an object holding them in `data`
 * (docs/endpoints.md, `banks.list` and `refunds.listForPayment`).
 */
export function itemsOf(body: unknown): unknown {
  return Array.isArray(body) ? body : isObject(body) ? body.data : undefined;
}

/**
 * Moves a resource-specific state field (`transfer_status`, `refund_status`) to `status`,
 * the one name the SDK's shapes use, so a record read from an enveloped answer (which
 * names the field) equals the same record read from a flat one (which says `status`).
 *
 * @param record - the candidate record; anything else is returned as is.
 * @param field - the state field to move.
 * @returns the record without `field`, its value in `status`; the record itself when
 *   `field` is absent.
 */
export function withStatusFrom(record: unknown, field: string): unknown {
  if (!isObject(record) || record[field] === undefined) return record;
  const { [field]: status, ...rest } = record;
  return { ...rest, status };
}

/**
 * Finds the items and the counts of a list, wherever the variant puts them: top level
 * (`{ total, page, pageSize, data: [] }`), under `data` (`{ data: { total, ..., data: [] } }`)
 * or under `data.records`.
 */
function listOf(body: unknown): {
  items: unknown;
  total: unknown;
  page: unknown;
  pageSize: unknown;
} {
  const container = isObject(body) && isObject(body.data) ? body.data : body;
  if (!isObject(container))
    return { items: container, total: undefined, page: undefined, pageSize: undefined };
  return {
    items: container.data ?? container.records ?? container.items,
    total: container.total,
    page: container.page,
    pageSize: container.pageSize ?? container.page_size,
  };
}

/**
 * Validates `value` against `schema`. The response schemas are loose objects: fields they
 * do not list are kept as sent (in a record, and in each record of a list).
 *
 * @throws {ResponseValidationError} naming every mismatch, with the raw body.
 */
export function conform<T extends v.GenericSchema>(
  schema: T,
  value: unknown,
  answer: RawResponse,
): v.InferOutput<T> {
  // The message and context are built only when the answer does not conform.
  return parseOrThrow(
    schema,
    value,
    ResponseValidationError,
    () =>
      `Unexpected response shape from ${`${answer.context.method ?? ''} ${answer.context.url ?? ''}`.trim()}`,
    () => ({ ...answer.context, rawBody: answer.rawBody }),
  );
}

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

const PageMeta = v.object({
  total: Count,
  page: v.pipe(Count, v.minValue(1)),
  pageSize: v.pipe(Count, v.minValue(1)),
});

/**
 * A validated page of `itemSchema` items from any list variant.
 *
 * @param requested - the page and page size asked for, used when the response omits them.
 * @throws {ResponseValidationError} when the items or the counts are missing or wrong.
 */
export function pageOf<T extends v.GenericSchema>(
  itemSchema: T,
  answer: RawResponse,
  requested: { page: number; pageSize: number },
): Page<v.InferOutput<T>> {
  const list = listOf(answer.body);
  const items = conform(v.array(itemSchema), list.items, answer);
  const meta = conform(
    PageMeta,
    {
      total: list.total,
      page: list.page ?? requested.page,
      pageSize: list.pageSize ?? requested.pageSize,
    },
    answer,
  );
  return { items, ...meta };
}
