// Banks (spec: Endpoints > Banks).
import * as v from 'valibot';
import { type ClientCore, type RequestOptions, SAFE } from '../internal/core.ts';
import {
  type Bank,
  BankSchema,
  type ResolvedAccount,
  ResolvedAccountSchema,
} from '../responses/banks.ts';
import { itemsOf } from '../responses/envelope.ts';
import {
  type ListBanksQuery,
  ListBanksQuerySchema,
  type ResolveAccountRequest,
  ResolveAccountRequestSchema,
} from '../schemas/banks.ts';

/** Supported banks and account-name resolution (spec: Banks). Reach it as `client.banks`. */
export class Banks {
  readonly #core: ClientCore;

  /** @internal */
  constructor(core: ClientCore) {
    this.#core = core;
  }

  /**
   * Lists the banks of a country (`GET /banks`, sent unsigned as the spec allows).
   * Bank codes are not unique across names.
   *
   * @param params - `country_code`, ISO 3166-1 alpha-2 upper case. @default 'NG'
   * @throws {RequestValidationError}; APIError, ConnectionError, TimeoutError, AbortError.
   */
  async list(params: ListBanksQuery = {}, options?: RequestOptions): Promise<Bank[]> {
    const query = this.#core.validate(ListBanksQuerySchema, params, 'banks.list');
    return this.#core.call(
      { method: 'GET', path: '/banks', query, unsigned: true, retry: SAFE },
      v.array(BankSchema),
      options,
      itemsOf,
    );
  }

  /**
   * Resolves an account number to its holder's name (`POST /banks/resolve`). Read-only,
   * so retried like a read.
   *
   * @throws {RequestValidationError}; {@link NotFoundError} when the account does not exist;
   *   APIError, ConnectionError, TimeoutError, AbortError.
   */
  async resolve(params: ResolveAccountRequest, options?: RequestOptions): Promise<ResolvedAccount> {
    const body = this.#core.validate(ResolveAccountRequestSchema, params, 'banks.resolve');
    return this.#core.call(
      { method: 'POST', path: '/banks/resolve', body, retry: SAFE },
      ResolvedAccountSchema,
      options,
    );
  }
}
