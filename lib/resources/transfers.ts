// Transfers (docs/payments-api.md, "Endpoints > Transfers", "States > Transfer").
import { TRANSFERS_INITIALIZE, TRANSFERS_LIST, TRANSFERS_VERIFY } from '../endpoints.ts';
import type { ClientCore, ListParams, RequestOptions } from '../internal/core.ts';
import type { PagedList } from '../pagination.ts';
import { pollUntilFinal, type WaitOptions } from '../polling.ts';
import type { Transfer } from '../responses/transfers.ts';
import type { InitializeTransferRequest, ListDisbursementsQuery } from '../schemas/transfers.ts';

/** Bank transfers from the merchant balance (docs/payments-api.md, "Endpoints > Transfers"). Reach it as `client.transfers`. */
export class Transfers {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Sends a transfer (`POST /disbursements/initialize`). Amount in major units. Safe to
   * retry: after an ambiguous failure the reference is looked up before anything is
   * sent again, so a transfer is created at most once.
   *
   * @returns the transfer, `status: 'processing'` (fields the response omits are filled from the request).
   * @throws {RequestValidationError} before sending; {@link InsufficientFundsError} (409);
   *   {@link ConflictError} on a duplicate reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  initialize(params: InitializeTransferRequest, options?: RequestOptions): Promise<Transfer> {
    return this.#core.request(TRANSFERS_INITIALIZE, { body: params }, options);
  }

  /**
   * Looks a transfer up (`GET /disbursements/verify/{reference}`).
   *
   * @returns the transfer with its state in `status`.
   * @throws {NotFoundError} for an unknown reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  verify(reference: string, options?: RequestOptions): Promise<Transfer> {
    return this.#core.request(TRANSFERS_VERIFY, { params: [reference] }, options);
  }

  /**
   * Lists transfers, newest first (`GET /merchants/disbursements`): iterate with
   * `for await`, or use `.page(n)` / `.pages()` / `.toArray({ limit })`.
   *
   * @param params - filters (status, customer_email, start_date/end_date `YYYY-MM-DD`), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters; the call errors when pages load.
   */
  list(params?: ListParams<ListDisbursementsQuery>, options?: RequestOptions): PagedList<Transfer> {
    return this.#core.list(TRANSFERS_LIST, params, options);
  }

  /**
   * Polls `verify` until the transfer leaves `processing`.
   *
   * @param options - intervalMs (2000), timeoutMs (120000), signal.
   * @returns the transfer once its state is not processing (success, failed, expired, or a newer state).
   * @throws {TimeoutError} when still processing at `timeoutMs`; {@link AbortError}; the errors of `verify`.
   */
  waitForFinal(reference: string, options?: WaitOptions): Promise<Transfer> {
    return pollUntilFinal(
      (signal) => this.verify(reference, signal),
      `transfer ${reference}`,
      options,
    );
  }
}
