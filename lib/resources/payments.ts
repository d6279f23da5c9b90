// Payments (spec: Endpoints > Payments).
import { PaymentsError } from '../errors.ts';
import {
  type ClientCore,
  findOrUndefined,
  type ListParams,
  type RequestOptions,
} from '../internal/core.ts';
import { path } from '../internal/path.ts';
import type { PagedList } from '../pagination.ts';
import {
  type Payment,
  PaymentSchema,
  type PaymentSession,
  PaymentSessionSchema,
} from '../responses/payments.ts';
import {
  type InitializePaymentRequest,
  InitializePaymentRequestSchema,
  type ListTransactionsQuery,
  ListTransactionsQuerySchema,
} from '../schemas/payments.ts';

/** Hosted checkout payments (spec: Payments). Reach it as `client.payments`. */
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
   *   reference; {@link PaymentsError} when the session was created but its answer was lost
   *   (the checkout address cannot be recovered: start a new payment); APIError,
   *   ConnectionError, TimeoutError, AbortError.
   */
  async initialize(
    params: InitializePaymentRequest,
    options?: RequestOptions,
  ): Promise<PaymentSession> {
    const reference = params.reference ?? `pay_${crypto.randomUUID()}`;
    const body = this.#core.validate(
      InitializePaymentRequestSchema,
      { ...params, reference },
      'payments.initialize',
    );
    const result = await this.#core.send(
      {
        method: 'POST',
        path: '/payments/initialize',
        body,
        retry: {
          kind: 'verify',
          lookup: () => findOrUndefined(() => this.verify(reference, options)),
        },
      },
      options,
    );
    if (result.kind === 'recovered') {
      throw new PaymentsError(
        `Payment ${reference} was created but its answer was lost, so its checkout address is unknown: start a new payment`,
      );
    }
    return this.#core.record(PaymentSessionSchema, result, (answer) => answer);
  }

  /**
   * Looks a payment up (`GET /payments/verify/{reference}`): `status` is the payment's
   * outcome, not the call's.
   *
   * @throws {NotFoundError} for an unknown reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async verify(reference: string, options?: RequestOptions): Promise<Payment> {
    return this.#core.read(path`/payments/verify/${reference}`, PaymentSchema, options);
  }

  /**
   * Lists payments, newest first (`GET /merchants/transactions`).
   *
   * @param params - status, payment_method, customer_email, start_date/end_date (ISO 8601, inclusive), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters.
   */
  list(params?: ListParams<ListTransactionsQuery>, options?: RequestOptions): PagedList<Payment> {
    return this.#core.list(
      {
        operation: 'payments.list',
        path: '/merchants/transactions',
        query: ListTransactionsQuerySchema,
        item: PaymentSchema,
      },
      params,
      options,
    );
  }
}
