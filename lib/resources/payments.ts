// Payments (docs/payments-api.md, "Endpoints > Payments").
import { PAYMENTS_INITIALIZE, PAYMENTS_LIST, PAYMENTS_VERIFY } from '../endpoints.ts';
import type { ClientCore, ListParams, RequestOptions } from '../internal/core.ts';
import type { PagedList } from '../pagination.ts';
import type { Payment, PaymentSession } from '../responses/payments.ts';
import type { InitializePaymentRequest, ListTransactionsQuery } from '../schemas/payments.ts';

/** Hosted checkout payments (docs/payments-api.md, "Endpoints > Payments"). Reach it as `client.payments`. */
export class Payments {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Starts a payment session (`POST /payments/initialize`). Amount in major units (a
   * decimal string or number). A reference is generated when none is given, so the call
   * is safe to retry: after an ambiguous failure the reference is looked up first.
   *
   * @returns `{ reference, authorization_url }`: send the customer to the checkout address.
   * @throws {RequestValidationError} before sending; {@link ConflictError} on a duplicate
   *   reference; {@link PaymentsError} when the session was created but its response was lost
   *   (the checkout address cannot be recovered: start a new payment); APIError,
   *   ConnectionError, TimeoutError, AbortError.
   */
  initialize(params: InitializePaymentRequest, options?: RequestOptions): Promise<PaymentSession> {
    // A generated reference makes the call safe to retry: it can be looked up.
    const body = { ...params, reference: params.reference ?? `pay_${crypto.randomUUID()}` };
    return this.#core.request(PAYMENTS_INITIALIZE, { body }, options);
  }

  /**
   * Looks a payment up (`GET /payments/verify/{reference}`): `status` is the payment's
   * outcome, not the call's.
   *
   * @throws {NotFoundError} for an unknown reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  verify(reference: string, options?: RequestOptions): Promise<Payment> {
    return this.#core.request(PAYMENTS_VERIFY, { params: [reference] }, options);
  }

  /**
   * Lists payments, newest first (`GET /merchants/transactions`).
   *
   * @param params - status, payment_method, customer_email, start_date/end_date (ISO 8601, inclusive), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters.
   */
  list(params?: ListParams<ListTransactionsQuery>, options?: RequestOptions): PagedList<Payment> {
    return this.#core.list(PAYMENTS_LIST, params, options);
  }
}
