// How the console writes an amount: the API's major units with two fraction digits and the
// currency code, `25,000.00 NGN`, the same under every browser locale (no Intl involved).

import { groupDigits } from './format.ts';

/**
 * An amount for people: two fraction digits, thousands grouped with commas, then the
 * currency code when there is one.
 *
 * @param amount - major units as the API gives them (a JSON number with at most two
 *   fraction digits, `5000.5`): printed, never added to anything.
 * @param currency - the ISO 4217 code, or `null`.
 * @returns e.g. `5,000.50 NGN`, or `1,200.13` without a currency.
 */
export function formatAmount(amount: number, currency: string | null): string {
  // toFixed picks the two-digit decimal nearest the number, which is the exact amount here.
  const [whole = '0', fraction = '00'] = amount.toFixed(2).split('.');
  const grouped = groupDigits(whole);
  return currency === null ? `${grouped}.${fraction}` : `${grouped}.${fraction} ${currency}`;
}
