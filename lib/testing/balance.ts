// The merchant balance and the account currency (docs/payments-api.md, "Errors").
import type { SandboxCore } from './core.ts';
import { insufficientFunds, invalidField } from './http-error.ts';

/**
 * Takes `minor` from the merchant balance, all or nothing.
 *
 * @param core - the sandbox.
 * @param minor - amount in minor units.
 * @throws {SandboxHttpError} 409 `insufficient_funds` "Insufficient funds" when short;
 *   the balance is then unchanged.
 */
export function debitBalance(core: SandboxCore, minor: number): void {
  if (minor > core.state.balanceMinor) throw insufficientFunds();
  core.state.balanceMinor -= minor;
}

/**
 * Adds `minor` to the merchant balance.
 *
 * @param core - the sandbox.
 * @param minor - amount in minor units.
 */
export function creditBalance(core: SandboxCore, minor: number): void {
  core.state.balanceMinor += minor;
}

/**
 * Checks that a request's currency is the merchant account's (the only one the
 * sandbox holds a balance in).
 *
 * @param core - the sandbox.
 * @param currency - the requested currency code.
 * @param path - the field name reported in the issue. @default 'currency'
 * @throws {SandboxHttpError} 400 `validation_failed` on `path`.
 */
export function requireAccountCurrency(
  core: SandboxCore,
  currency: string,
  path = 'currency',
): void {
  if (currency !== core.options.currency) {
    throw invalidField(
      path,
      `Currency ${currency} is not supported by this merchant account (${core.options.currency})`,
    );
  }
}
