// Refunds (docs/payments-api.md, "Endpoints > Refunds", "States > Refund").
import {
  REFUNDS_COUNT_BY_STATUS,
  REFUNDS_INITIALIZE,
  REFUNDS_LIST,
  REFUNDS_LIST_FOR_PAYMENT,
  REFUNDS_RETRIEVE,
} from '../endpoints.ts';
import type { ClientCore, ListParams, RequestOptions } from '../internal/core.ts';
import type { PagedList } from '../pagination.ts';
import { pollUntilFinal, type WaitOptions } from '../polling.ts';
import type { Refund, RefundCounts } from '../responses/refunds.ts';
import type { InitializeRefundRequest, ListRefundsQuery } from '../schemas/refunds.ts';

/** Refunds of completed payments (docs/payments-api.md, "Endpoints > Refunds"). Reach it as `client.refunds`. */
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
  initialize(params: InitializeRefundRequest, options?: RequestOptions): Promise<Refund> {
    return this.#core.request(REFUNDS_INITIALIZE, { body: params }, options);
  }

  /**
   * Looks a refund up (`GET /refunds/{refund_reference}`).
   *
   * @throws {NotFoundError} for an unknown reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  retrieve(refundReference: string, options?: RequestOptions): Promise<Refund> {
    return this.#core.request(REFUNDS_RETRIEVE, { params: [refundReference] }, options);
  }

  /**
   * Every refund of one payment (`GET /refunds/transactions/{payment_reference}`).
   *
   * @throws {NotFoundError} for an unknown payment; APIError, ConnectionError, TimeoutError, AbortError.
   */
  listForPayment(paymentReference: string, options?: RequestOptions): Promise<Refund[]> {
    return this.#core.request(REFUNDS_LIST_FOR_PAYMENT, { params: [paymentReference] }, options);
  }

  /**
   * Lists refunds, newest first (`GET /merchants/refunds`).
   *
   * @param params - status, payment_reference, start_date/end_date (`YYYY-MM-DD`), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters.
   */
  list(params?: ListParams<ListRefundsQuery>, options?: RequestOptions): PagedList<Refund> {
    return this.#core.list(REFUNDS_LIST, params, options);
  }

  /**
   * Counts refunds by state (`GET /refunds/count-by-status`), enveloped or not.
   *
   * @returns `{ processing, success, failed }` (integers; other states kept).
   */
  countByStatus(options?: RequestOptions): Promise<RefundCounts> {
    return this.#core.request(REFUNDS_COUNT_BY_STATUS, {}, options);
  }

  /**
   * Polls `retrieve` until the refund leaves `processing`.
   *
   * @param options - intervalMs (2000), timeoutMs (120000), signal.
   * @throws {TimeoutError}; {@link AbortError}; the errors of `retrieve`.
   */
  waitForFinal(refundReference: string, options?: WaitOptions): Promise<Refund> {
    return pollUntilFinal(
      (signal) => this.retrieve(refundReference, signal),
      `refund ${refundReference}`,
      options,
    );
  }
}
