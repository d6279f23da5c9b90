// Virtual accounts (spec: Endpoints > Virtual accounts).
import {
  type ClientCore,
  findOrUndefined,
  type ListParams,
  type RequestOptions,
  SAFE,
} from '../internal/core.ts';
import { path } from '../internal/path.ts';
import type { PagedList } from '../pagination.ts';
import { recordOf } from '../responses/envelope.ts';
import {
  type VirtualAccount,
  VirtualAccountSchema,
  type VirtualAccountTransaction,
  VirtualAccountTransactionSchema,
} from '../responses/virtual-accounts.ts';
import {
  type CreateVirtualAccountRequest,
  CreateVirtualAccountRequestSchema,
  type ListVirtualAccountTransactionsQuery,
  ListVirtualAccountTransactionsQuerySchema,
  VirtualAccountByEmailRequestSchema,
} from '../schemas/virtual-accounts.ts';

/** Persistent virtual bank accounts for customers (spec: Virtual accounts). Reach it as `client.virtualAccounts`. */
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
   * @returns the account (the flat creation answer, completed with currency_code and
   *   metadata from the request).
   * @throws {RequestValidationError} (bvn must be 11 digits); {@link ConflictError} on a
   *   duplicate account_reference; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async create(
    params: CreateVirtualAccountRequest,
    options?: RequestOptions,
  ): Promise<VirtualAccount> {
    const body = this.#core.validate(
      CreateVirtualAccountRequestSchema,
      params,
      'virtualAccounts.create',
    );
    const result = await this.#core.send(
      {
        method: 'POST',
        path: '/virtual-accounts',
        body,
        retry: {
          kind: 'verify',
          lookup: () => findOrUndefined(() => this.retrieve(body.account_reference, options)),
        },
      },
      options,
    );
    const { bvn: _bvn, ...sent } = body;
    return this.#core.record(VirtualAccountSchema, result, (answer) => {
      // The flat creation answer's `status` is the call's, not the account's.
      const { status: _status, ...account } = recordOf(answer) as Record<string, unknown>;
      return { ...sent, ...account };
    });
  }

  /**
   * Looks an account up by its reference (`GET /virtual-accounts/{account_reference}`).
   *
   * @throws {NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async retrieve(accountReference: string, options?: RequestOptions): Promise<VirtualAccount> {
    return this.#core.read(
      path`/virtual-accounts/${accountReference}`,
      VirtualAccountSchema,
      options,
    );
  }

  /**
   * Looks an account up by customer email (`POST /virtual-accounts/email`; read-only,
   * retried like a read).
   *
   * @throws {RequestValidationError}; {@link NotFoundError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async retrieveByEmail(email: string, options?: RequestOptions): Promise<VirtualAccount> {
    const body = this.#core.validate(
      VirtualAccountByEmailRequestSchema,
      { email },
      'virtualAccounts.retrieveByEmail',
    );
    return this.#core.call(
      { method: 'POST', path: '/virtual-accounts/email', body, retry: SAFE },
      VirtualAccountSchema,
      options,
    );
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
    return this.#core.list(
      {
        operation: 'virtualAccounts.listTransactions',
        path: '/merchants/virtual-accounts/transactions',
        query: ListVirtualAccountTransactionsQuerySchema,
        item: VirtualAccountTransactionSchema,
      },
      params,
      options,
    );
  }
}
