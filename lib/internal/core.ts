// What every resource shares: input validation, sending, and shaping answers.
import type * as v from 'valibot';
import { NotFoundError } from '../api-errors.ts';
import { RequestValidationError } from '../errors.ts';
import { type Page, PagedList } from '../pagination.ts';
import { conform, pageOf, type RawAnswer, recordOf } from '../responses/envelope.ts';
import { parseOrThrow } from './issues.ts';
import type { CallResult, CallSpec, Transport } from './transport.ts';

/** Per-call options every method accepts (DESIGN 2: reliability). */
export interface RequestOptions {
  /** Aborts the call (and its retries); the method rejects with AbortError. */
  signal?: AbortSignal;
  /** Timeout of each attempt in milliseconds, body read included. @default the client's (60000) */
  timeoutMs?: number;
  /** Gateway mode: the `Idempotency-Key` to send. @default a new UUID per call, reused by its retries */
  idempotencyKey?: string;
}

/** The query of a list as the SDK takes it: page numbers as numbers. */
export type ListParams<Q> = Omit<Q, 'page' | 'page_size'> & {
  /** 1-based page to start from. @default 1 */
  page?: number;
  /** Items per page, 1 to 100. @default 10 */
  page_size?: number;
};

/** The transport plus the helpers resources are written with. */
export class ClientCore {
  readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /**
   * Validates `input` before anything is sent (DESIGN 2).
   *
   * @param operation - names the method in the error, e.g. `transfers.initialize`.
   * @throws {RequestValidationError} listing every issue with its path.
   */
  validate<T extends v.GenericSchema>(
    schema: T,
    input: unknown,
    operation: string,
  ): v.InferOutput<T> {
    return parseOrThrow(schema, input, RequestValidationError, `Invalid input to ${operation}`);
  }

  /** Sends one logical call with the per-call options. */
  send(spec: CallSpec, options: RequestOptions | undefined): Promise<CallResult> {
    return this.transport.call({
      ...spec,
      signal: options?.signal,
      timeoutMs: options?.timeoutMs,
      idempotencyKey: options?.idempotencyKey,
    });
  }

  /**
   * A GET (retried as a read) whose answer is shaped and validated into one record.
   *
   * @param shape - turns the body into the candidate record. @default recordOf (unwrap the envelope)
   * @throws {ResponseValidationError}; the errors of the transport.
   */
  read<T extends v.GenericSchema>(
    path: string,
    schema: T,
    options: RequestOptions | undefined,
    shape?: (body: unknown) => unknown,
  ): Promise<v.InferOutput<T>> {
    return this.call({ method: 'GET', path, retry: SAFE }, schema, options, shape);
  }

  /**
   * Sends a call, then shapes and validates its answer (or returns the recovered record).
   *
   * @param shape - turns the body into the candidate record. @default recordOf (unwrap the envelope)
   * @throws {ResponseValidationError}; the errors of the transport.
   */
  async call<T extends v.GenericSchema>(
    spec: CallSpec,
    schema: T,
    options: RequestOptions | undefined,
    shape: (body: unknown) => unknown = recordOf,
  ): Promise<v.InferOutput<T>> {
    return this.record(schema, await this.send(spec, options), shape);
  }

  /**
   * Shapes and validates one record of a response.
   *
   * @param shape - turns the body into the candidate record (unwrap, rename fields).
   * @throws {ResponseValidationError} with the raw body when it does not fit.
   */
  record<T extends v.GenericSchema>(
    schema: T,
    result: CallResult,
    shape: (body: unknown) => unknown,
  ): v.InferOutput<T> {
    if (result.kind === 'recovered') return result.value as v.InferOutput<T>;
    return conform(schema, shape(result.body), answerOf(result));
  }

  /**
   * A lazily loaded list: the filters are validated at once, pages are fetched as used,
   * each validated item by item whichever variant holds them.
   *
   * @throws {RequestValidationError} at once for bad filters or page numbers.
   */
  list<Q extends object, T extends v.GenericSchema>(
    endpoint: { operation: string; path: string; query: v.GenericSchema; item: T },
    params: ListParams<Q> | undefined,
    options: RequestOptions | undefined,
  ): PagedList<v.InferOutput<T>> {
    const first = params?.page ?? 1;
    this.validate(endpoint.query, listQuery(params, first), endpoint.operation);
    const pageSize = params?.page_size ?? DEFAULT_PAGE_SIZE;
    return new PagedList(async (page): Promise<Page<v.InferOutput<T>>> => {
      const query = listQuery(params, page);
      const result = await this.send(
        { method: 'GET', path: endpoint.path, query, retry: SAFE },
        options,
      );
      if (result.kind === 'recovered') throw new TypeError('A list is never recovered');
      return pageOf(endpoint.item, answerOf(result), { page, pageSize });
    }, first);
  }
}

/**
 * Runs a lookup for verify-before-resend: the record when it exists, `undefined` on 404
 * (the first attempt did not land).
 */
export async function findOrUndefined<T>(lookup: () => Promise<T>): Promise<T | undefined> {
  try {
    return await lookup();
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** The retry policy of reads. */
export const SAFE = { kind: 'safe' } as const;

/** Items per page when the caller gives none (spec: Limits). */
const DEFAULT_PAGE_SIZE = 10;

/** The query string entries of a list call: page numbers as strings for the schema. */
function listQuery<Q extends object>(
  params: ListParams<Q> | undefined,
  page: number,
): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value !== undefined && name !== 'page') query[name] = String(value);
  }
  query.page = String(page);
  return query;
}

function answerOf(result: Extract<CallResult, { kind: 'response' }>): RawAnswer {
  return {
    body: result.body,
    rawBody: result.rawBody,
    context: {
      method: result.method,
      url: result.url,
      status: result.status,
      headers: result.headers,
      requestId: result.requestId,
    },
  };
}
