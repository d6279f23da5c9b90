// Virtual accounts (docs/payments-api.md, "Endpoints > Virtual accounts").
import {
  VIRTUAL_ACCOUNTS_CREATE,
  VIRTUAL_ACCOUNTS_FIND_BY_EMAIL,
  VIRTUAL_ACCOUNTS_LIST_TRANSACTIONS,
  VIRTUAL_ACCOUNTS_RETRIEVE,
} from '../endpoints.ts';
import type { ClientCore, ListParams, RequestOptions } from '../internal/core.ts';
import type { PagedList } from '../pagination.ts';
import type { VirtualAccount, VirtualAccountTransaction } from '../responses/virtual-accounts.ts';
import type {
  CreateVirtualAccountRequest,
  ListVirtualAccountTransactionsQuery,
} from '../schemas/virtual-accounts.ts';

/** Persistent virtual bank accounts for customers (docs/payments-api.md, "Endpoints > Virtual accounts"). Reach it as `client.virtualAccounts`. */
export class VirtualAccounts {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Provisions a virtual account (`POST /virtual-accounts`). Safe to retry: after an
   * ambiguous failure the account reference is looked up first.
   *
   * @returns the account (the flat creation response, completed with currency_code and
   *   metadata from the request).
   * @throws {RequestValidationError} (bvn must be 11 digits); {@link ConflictError} on a
   *   duplicate account_reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  create(params: CreateVirtualAccountRequest, options?: RequestOptions): Promise<VirtualAccount> {
    return this.#core.request(VIRTUAL_ACCOUNTS_CREATE, { body: params }, options);
  }

  /**
   * Looks an account up by its reference (`GET /virtual-accounts/{account_reference}`).
   *
   * @throws {NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  retrieve(accountReference: string, options?: RequestOptions): Promise<VirtualAccount> {
    return this.#core.request(VIRTUAL_ACCOUNTS_RETRIEVE, { params: [accountReference] }, options);
  }

  /**
   * Looks an account up by customer email (`POST /virtual-accounts/email`; read-only,
   * retried like a read).
   *
   * @throws {RequestValidationError}; {@link NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  retrieveByEmail(email: string, options?: RequestOptions): Promise<VirtualAccount> {
    return this.#core.request(VIRTUAL_ACCOUNTS_FIND_BY_EMAIL, { body: { email } }, options);
  }

  /**
   * Lists inbound transfers, newest first (`GET /merchants/virtual-accounts/transactions`).
   *
   * @param params - account_reference, status, start_date/end_date (ISO 8601, inclusive), page_size 1..100.
   * @throws {RequestValidationError} at once for bad filters.
   */
  listTransactions(
    params?: ListParams<ListVirtualAccountTransactionsQuery>,
    options?: RequestOptions,
  ): PagedList<VirtualAccountTransaction> {
    return this.#core.list(VIRTUAL_ACCOUNTS_LIST_TRANSACTIONS, params, options);
  }
}
