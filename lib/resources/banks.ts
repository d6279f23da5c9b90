// Banks (docs/payments-api.md, "Endpoints > Banks").
import { BANKS_LIST, BANKS_RESOLVE } from '../endpoints.ts';
import type { ClientCore, RequestOptions } from '../internal/core.ts';
import type { Bank, ResolvedAccount } from '../responses/banks.ts';
import type { ListBanksQuery, ResolveAccountRequest } from '../schemas/banks.ts';

/** Supported banks and account-name resolution (docs/payments-api.md, "Endpoints > Banks"). Reach it as `client.banks`. */
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
  list(params: ListBanksQuery = {}, options?: RequestOptions): Promise<Bank[]> {
    return this.#core.request(BANKS_LIST, { query: params }, options);
  }

  /**
   * Resolves an account number to its holder's name (`POST /banks/resolve`). Read-only,
   * so retried like a read.
   *
   * @throws {RequestValidationError}; {@link NotFoundError} when the account does not exist;
   *   APIError, ConnectionError, TimeoutError, AbortError.
   */
  resolve(params: ResolveAccountRequest, options?: RequestOptions): Promise<ResolvedAccount> {
    return this.#core.request(BANKS_RESOLVE, { body: params }, options);
  }
}
