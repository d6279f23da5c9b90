// What every resource shares: input validation, sending, and shaping answers.
import type * as v from 'valibot';
import { NotFoundError } from '../api-errors.ts';
import type { Endpoint } from '../endpoints.ts';
import { RedactedError, RequestValidationError } from '../errors.ts';
import { type Page, PagedList } from '../pagination.ts';
import { conform, pageOf, type RawResponse } from '../responses/envelope.ts';
import { parseOrThrow } from './issues.ts';
import { lookupMismatches } from './lookup.ts';
import { fillPath } from './path.ts';
import type { CallResult, CallSpec, RetryPolicy, Transport } from './transport.ts';

/** Per-call options every method accepts. */
export interface RequestOptions {
  /** Aborts the call (and its retries); the method rejects with AbortError. */
  signal?: AbortSignal;
  /** Timeout of each attempt in milliseconds, body read included. @default the client's (60000) */
  timeoutMs?: number;
  /**
   * Budget of this call in milliseconds, all attempts, waits and lookups included.
   * @default the client's `deadlineMs` (none)
   */
  deadlineMs?: number;
  /** Gateway mode: the `Idempotency-Key` to send. @default a new UUID per call, reused by its retries */
  idempotencyKey?: string;
  /** `X-Request-Id` sent with every attempt, e.g. to carry a caller's id through. @default a new id per call */
  requestId?: string;
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
   * Validates `input` before anything is sent, so bad input never reaches the network.
   *
   * @param operation - names the call in the error, e.g. `POST /disbursements/initialize`.
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
      deadlineMs: options?.deadlineMs,
      idempotencyKey: options?.idempotencyKey,
      requestId: options?.requestId,
    });
  }

  /**
   * Calls one endpoint of the table and returns its normalized record: validates the body
   * (or the query) before anything is sent, fills the path parameters, retries as the
   * endpoint's effect allows (reads always; a `money` POST with a lookup only after its
   * record is still absent at the end of the settle window, a resend refused as a
   * duplicate reference being looked up again; others never after an ambiguous failure),
   * then shapes and validates the response.
   *
   * @param endpoint - the table entry (lib/endpoints.ts).
   * @param input - `params`: path parameter values in order; `body`; `query` (strings).
   * @param retry - overrides the policy derived from the endpoint; the record its lookup
   *   finds is then the response.
   * @returns the record, or the record verify-before-resend found.
   * @throws {RequestValidationError} before sending; {@link ResponseValidationError};
   *   {@link PaymentsError} when the call was carried out, its response was lost and its
   *   lookup cannot recover it (`recover: null`: a payment session's checkout address is
   *   in no read); {@link OutcomeUnknownError} when a resend was refused
   *   because the reference exists and its record stayed unreadable; the errors of the
   *   transport.
   */
  async request<Out>(
    endpoint: Endpoint<Out>,
    input: EndpointInput,
    options: RequestOptions | undefined,
    retry?: RetryPolicy,
  ): Promise<Out> {
    // Named only in errors: built on the failing path alone.
    const invalid = () => `Invalid input to ${operationOf(endpoint)}`;
    const check = (schema: v.GenericSchema | undefined, value: unknown) =>
      schema === undefined ? value : parseOrThrow(schema, value, RequestValidationError, invalid);
    const body = check(endpoint.body, input.body) as Record<string, unknown> | undefined;
    const lookup = endpoint.lookup;
    const reference = lookup && body?.[lookup.field];
    const result = await this.send(
      {
        method: endpoint.method,
        path: fillPath(endpoint.path, input.params ?? []),
        query: check(endpoint.query, input.query) as Record<string, string> | undefined,
        body,
        unsigned: endpoint.unsigned,
        retry: retry ?? this.#retryPolicy(endpoint, reference, options),
      },
      options,
    );
    if (result.kind === 'response') {
      return conform(endpoint.response, endpoint.shape(result.body, body), rawResponseOf(result));
    }
    if (retry) return result.value as Out;
    const mismatched = lookup && lookupMismatches(lookup, body ?? {}, result.value);
    if (mismatched?.length) {
      throw new RedactedError(
        `${operationOf(endpoint)}: ${String(reference)} exists with another ${mismatched}; not resent`,
      );
    }
    // A lookup that recovers answers reads the POST's own record (its type says so): that
    // record is this call's normalized response.
    if (lookup?.recover) return result.value as Out;
    throw new RedactedError(
      `${operationOf(endpoint)} was carried out but its answer is lost: start over with a new reference`,
    );
  }

  /**
   * How a call of `endpoint` may be retried after an ambiguous failure: reads always;
   * a `money` POST whose lookup has the reference in the body by looking its record up
   * first (verify before resend); anything else never.
   *
   * @param reference - the value of the lookup's body field, if any.
   * @param options - the call's options, which its lookups share.
   */
  #retryPolicy(
    endpoint: Endpoint,
    reference: unknown,
    options: RequestOptions | undefined,
  ): RetryPolicy {
    if (endpoint.effect === 'read') return SAFE;
    const lookup = endpoint.lookup;
    if (lookup === undefined || typeof reference !== 'string') return NEVER;
    return {
      kind: 'verify',
      reference,
      lookup: (deadlineMs) =>
        findOrUndefined(() =>
          this.request(lookup.endpoint, { params: [reference] }, withDeadline(options, deadlineMs)),
        ),
    };
  }

  /**
   * A lazily loaded list: the filters are validated at once, pages are fetched as used,
   * each validated item by item whichever variant holds them.
   *
   * @throws {RequestValidationError} at once for bad filters or page numbers.
   */
  list<Q extends object, Out>(
    endpoint: Endpoint<Out>,
    params: ListParams<Q> | undefined,
    options: RequestOptions | undefined,
  ): PagedList<Out> {
    const first = params?.page ?? 1;
    if (endpoint.query)
      this.validate(endpoint.query, listQuery(params, first), operationOf(endpoint));
    const pageSize = params?.page_size ?? DEFAULT_PAGE_SIZE;
    return new PagedList(async (page): Promise<Page<Out>> => {
      const query = listQuery(params, page);
      const result = await this.send(
        { method: 'GET', path: endpoint.path, query, retry: SAFE },
        options,
      );
      if (result.kind === 'recovered') throw new TypeError('A list is never recovered');
      return pageOf(endpoint.response, rawResponseOf(result), { page, pageSize });
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

/**
 * The per-call options of a lookup made for a call: the same signal, timeout and request
 * id, and what is left of the call's budget, so the lookup never outlives the call.
 *
 * @param options - the call's options.
 * @param deadlineMs - milliseconds left of the call's budget; `undefined` without one.
 */
export function withDeadline(
  options: RequestOptions | undefined,
  deadlineMs: number | undefined,
): RequestOptions | undefined {
  return deadlineMs === undefined ? options : { ...options, deadlineMs };
}

/** The retry policy of reads. */
const SAFE = { kind: 'safe' } as const;
/** The retry policy of writes with nothing to look up. */
const NEVER = { kind: 'never' } as const;

/** The inputs of one endpoint call. */
export interface EndpointInput {
  /** Path parameter values, in the order the path names them (each encoded as one segment). */
  params?: readonly string[];
  /** The JSON body, validated with the endpoint's body schema. */
  body?: unknown;
  /** The query, validated with the endpoint's query schema. */
  query?: unknown;
}

// Names the call in validation errors: `POST /disbursements/initialize`.
const operationOf = (endpoint: Endpoint) => `${endpoint.method} ${endpoint.path}`;

/** Items per page when the caller gives none (docs/payments-api.md, "Limits"). */
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

function rawResponseOf(result: Extract<CallResult, { kind: 'response' }>): RawResponse {
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
