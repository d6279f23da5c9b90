// Direct debit: mandates, debits, disbursement (docs/payments-api.md, "Endpoints > Direct debit").
import * as v from 'valibot';
import {
  DEBITS_CREATE,
  DEBITS_DISBURSE,
  DEBITS_STATUS,
  MANDATES_CANCEL,
  MANDATES_CREATE,
  MANDATES_INITIATE_ACTIVATION,
  MANDATES_RETRIEVE,
  MANDATES_VALIDATE_ACTIVATION,
} from '../endpoints.ts';
import { type ClientCore, type RequestOptions, withDeadline } from '../internal/core.ts';
import { pollUntilFinal, type WaitOptions } from '../polling.ts';
import type {
  ActivationChallenge,
  Debit,
  Mandate,
  MandateState,
} from '../responses/direct-debits.ts';
import type { Transfer } from '../responses/transfers.ts';
import {
  type CreateMandateRequest,
  type DebitRequest,
  DisburseRequestSchema,
  type ValidateActivationRequest,
} from '../schemas/direct-debits.ts';

// Every entry of DisburseRequestSchema, made optional.
type OpenDisburseEntries = {
  [K in keyof typeof DisburseRequestSchema.entries]: v.OptionalSchema<
    (typeof DisburseRequestSchema.entries)[K],
    undefined
  >;
};

/**
 * Body of `POST /direct-debits/disburse`, which the spec does not show: the fields the
 * sandbox takes, each optional, and any others passed through (docs/assumptions.md).
 */
export const OpenDisburseRequestSchema: v.ObjectSchema<OpenDisburseEntries, undefined> = v.object(
  Object.fromEntries(
    Object.entries(DisburseRequestSchema.entries).map(([name, schema]) => [
      name,
      v.optional(schema),
    ]),
  ) as OpenDisburseEntries,
);

/** Input of {@link OpenDisburseRequestSchema}, plus any other field (sent as given). */
export type DisburseRequest = v.InferInput<typeof OpenDisburseRequestSchema> & {
  [field: string]: unknown;
};

/** Mandates, debits and disbursement of collected funds (docs/payments-api.md, "Endpoints > Direct debit"). Reach it as `client.directDebits`. */
export class DirectDebits {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Creates a mandate, `pending` until activated (`POST /direct-debits/mandates`).
   * start_date in the future, end_date at least 30 days later, monthly_amount in major
   * units. Never resent after an ambiguous failure: it has no merchant reference to look
   * up, so a lost response surfaces as the error (check your mandates before retrying).
   *
   * @throws {RequestValidationError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  createMandate(params: CreateMandateRequest, options?: RequestOptions): Promise<Mandate> {
    return this.#core.request(MANDATES_CREATE, { body: params }, options);
  }

  /**
   * Starts the bank authorization of a mandate (`POST .../initiate-activation`).
   *
   * @returns the two parameters to ask the customer for (`param1`/`value1`, `param2`/`value2`).
   * @throws {NotFoundError}; {@link ConflictError} for an active or cancelled mandate; APIError, ...
   */
  initiateActivation(
    mandateReference: string,
    options?: RequestOptions,
  ): Promise<ActivationChallenge> {
    return this.#core.request(
      MANDATES_INITIATE_ACTIVATION,
      { params: [mandateReference] },
      options,
    );
  }

  /**
   * Completes activation with the customer's answers (`POST .../validate-activation`).
   *
   * @param params - param1, value1, param2, value2 (mandate_reference is taken from the first argument).
   * @returns `{ mandate_reference, status: 'active' }`.
   * @throws {ActivationNotInitiatedError} (409) before initiate-activation; APIError, ...
   */
  validateActivation(
    mandateReference: string,
    params: Omit<ValidateActivationRequest, 'mandate_reference'>,
    options?: RequestOptions,
  ): Promise<MandateState> {
    return this.#core.request(
      MANDATES_VALIDATE_ACTIVATION,
      { params: [mandateReference], body: { ...params, mandate_reference: mandateReference } },
      options,
    );
  }

  /**
   * Looks a mandate up (`GET /direct-debits/mandates/{mandate_reference}`).
   *
   * @throws {NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  retrieveMandate(mandateReference: string, options?: RequestOptions): Promise<Mandate> {
    return this.#core.request(MANDATES_RETRIEVE, { params: [mandateReference] }, options);
  }

  /**
   * Cancels a pending or active mandate (`PATCH .../cancel`). After an ambiguous failure
   * the mandate is looked up: already cancelled means done.
   *
   * @returns `{ mandate_reference, status: 'cancelled' }`.
   * @throws {NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  cancelMandate(mandateReference: string, options?: RequestOptions): Promise<MandateState> {
    return this.#core.request(MANDATES_CANCEL, { params: [mandateReference] }, options, {
      kind: 'verify',
      lookup: async (deadlineMs) => {
        const mandate = await this.retrieveMandate(
          mandateReference,
          withDeadline(options, deadlineMs),
        );
        return mandate.status === 'cancelled'
          ? { mandate_reference: mandate.mandate_reference, status: mandate.status }
          : undefined;
      },
    });
  }

  /**
   * Debits an active mandate (`POST /direct-debits/debit`). Amount in major units, within
   * the mandate's monthly amount and count. Safe to retry: after an ambiguous failure
   * the payment_reference is looked up first.
   *
   * @returns the debit, `status: 'processing'`.
   * @throws {MandateNotActiveError} (409); {@link UnprocessableEntityError} for monthly
   *   limits or the mandate's dates; APIError, ConnectionError, TimeoutError, AbortError.
   */
  debit(params: DebitRequest, options?: RequestOptions): Promise<Debit> {
    return this.#core.request(DEBITS_CREATE, { body: params }, options);
  }

  /**
   * Looks a debit up (`GET /direct-debits/status/{payment_reference}`).
   *
   * @throws {NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  debitStatus(paymentReference: string, options?: RequestOptions): Promise<Debit> {
    return this.#core.request(DEBITS_STATUS, { params: [paymentReference] }, options);
  }

  /**
   * Polls `debitStatus` until the debit leaves `processing`.
   *
   * @param options - intervalMs (2000), timeoutMs (120000), signal.
   * @throws {TimeoutError}; {@link AbortError}; the errors of `debitStatus`.
   */
  waitForFinal(paymentReference: string, options?: WaitOptions): Promise<Debit> {
    return pollUntilFinal(
      (signal) => this.debitStatus(paymentReference, signal),
      `debit ${paymentReference}`,
      options,
    );
  }

  /**
   * Disburses collected funds to a bank account (`POST /direct-debits/disburse`; the API
   * shows no body: see {@link OpenDisburseRequestSchema}). Never resent after an
   * ambiguous failure.
   *
   * @returns the disbursement as a transfer (amounts in major units).
   * @throws {RequestValidationError}; {@link InsufficientFundsError}; APIError, ...
   */
  async disburse(params: DisburseRequest, options?: RequestOptions): Promise<Transfer> {
    // The spec shows no body: the known fields are checked leniently, the others sent as given.
    const known = this.#core.validate(
      OpenDisburseRequestSchema,
      params,
      'POST /direct-debits/disburse',
    );
    const { body: _strict, ...lenient } = DEBITS_DISBURSE;
    return this.#core.request(lenient, { body: { ...params, ...known } }, options);
  }
}
