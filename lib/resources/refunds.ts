// Refunds (spec: Endpoints > Refunds; States > Refund).

import * as v from 'valibot';
import {
  type ClientCore,
  findOrUndefined,
  type ListParams,
  type RequestOptions,
} from '../internal/core.ts';
import { path } from '../internal/path.ts';
import type { PagedList } from '../pagination.ts';
import { pollUntilFinal, type WaitOptions } from '../polling.ts';
import { itemsOf, recordOf, withStatusFrom } from '../responses/envelope.ts';
import {
  type Refund,
  type RefundCounts,
  RefundCountsSchema,
  RefundItemSchema,
  RefundSchema,
} from '../responses/refunds.ts';
import {
  type InitializeRefundRequest,
  InitializeRefundRequestSchema,
  type ListRefundsQuery,
  ListRefundsQuerySchema,
} from '../schemas/refunds.ts';

const refundOf = (body: unknown) => withStatusFrom(recordOf(body), 'refund_status');

/** Refunds of completed payments (spec: Refunds). Reach it as `client.refunds`. */
export class Refunds {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Refunds a payment in full or in part (`POST /refunds/initialize`). Amount in major
   * units. Safe to retry: after an ambiguous failure the refund reference is looked up first.
   *
   * @returns the refund, queued: `status: 'processing'` (fields filled from the request).
   * @throws {RequestValidationError} before sending; {@link DuplicateRefundError} (409
   *   "Refund already exists"); {@link UnprocessableEntityError} when the refunds would
   *   exceed the payment; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async initialize(params: InitializeRefundRequest, options?: RequestOptions): Promise<Refund> {
    const body = this.#core.validate(InitializeRefundRequestSchema, params, 'refunds.initialize');
    return this.#core.call(
      {
        method: 'POST',
        path: '/refunds/initialize',
        body,
        retry: {
          kind: 'verify',
          lookup: () => findOrUndefined(() => this.retrieve(body.refund_reference, options)),
        },
      },
      RefundSchema,
      options,
      // The answer's `status` is the call's ("success") or "processing": a new refund is queued.
      (answer) => ({
        ...body,
        amount: Number(body.amount),
        ...(recordOf(answer) as object),
        status: 'processing',
      }),
    );
  }

  /**
   * Looks a refund up (`GET /refunds/{refund_reference}`).
   *
   * @throws {NotFoundError} for an unknown reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async retrieve(refundReference: string, options?: RequestOptions): Promise<Refund> {
    return this.#core.read(path`/refunds/${refundReference}`, RefundSchema, options, refundOf);
  }

  /**
   * Every refund of one payment (`GET /refunds/transactions/{payment_reference}`).
   *
   * @throws {NotFoundError} for an unknown payment; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async listForPayment(paymentReference: string, options?: RequestOptions): Promise<Refund[]> {
    return this.#core.read(
      path`/refunds/transactions/${paymentReference}`,
      v.array(RefundItemSchema),
      options,
      itemsOf,
    );
  }

  /**
   * Lists refunds, newest first (`GET /merchants/refunds`).
   *
   * @param params - status, payment_reference, start_date/end_date (`YYYY-MM-DD`), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters.
   */
  list(params?: ListParams<ListRefundsQuery>, options?: RequestOptions): PagedList<Refund> {
    return this.#core.list(
      {
        operation: 'refunds.list',
        path: '/merchants/refunds',
        query: ListRefundsQuerySchema,
        item: RefundItemSchema,
      },
      params,
      options,
    );
  }

  /**
   * Counts refunds by state (`GET /refunds/count-by-status`), enveloped or not.
   *
   * @returns `{ processing, success, failed }` (integers; other states kept).
   */
  async countByStatus(options?: RequestOptions): Promise<RefundCounts> {
    return this.#core.read('/refunds/count-by-status', RefundCountsSchema, options, (body) => {
      const { status: _status, ...counts } = recordOf(body) as Record<string, unknown>;
      return counts;
    });
  }

  /**
   * Polls `retrieve` until the refund leaves `processing`.
   *
   * @param options - intervalMs (2000), timeoutMs (120000), signal.
   * @throws {TimeoutError}; {@link AbortError}; the errors of `retrieve`.
   */
  waitForFinal(refundReference: string, options?: WaitOptions): Promise<Refund> {
    return pollUntilFinal(
      (signal) => this.retrieve(refundReference, signal === undefined ? {} : { signal }),
      `refund ${refundReference}`,
      options,
    );
  }
}
