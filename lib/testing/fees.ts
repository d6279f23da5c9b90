// The sandbox's fee schedule (not shown by the spec; see docs/assumptions.md).
import { applyBasisPoints } from '../money.ts';

/** Payment fee rate: 1.5 %, in basis points. */
const PAYMENT_FEE_BASIS_POINTS = 150;
/** Flat part of the payment fee: 100.00, in minor units. */
const PAYMENT_FEE_FLAT_MINOR = 10_000;
/** Payment fee cap: 2,000.00, in minor units. */
const PAYMENT_FEE_CAP_MINOR = 200_000;

/**
 * Fee of a payment: 1.5 % (rounded half up to the minor unit) + 100.00, capped at
 * 2,000.00 and never above the payment itself. Customer-borne unless the payment was
 * initialized with `merchant_bears_fees` (docs/payments-api.md, "Endpoints > Payments").
 *
 * @param amountMinor - payment amount in minor units.
 * @returns the fee in minor units.
 */
export function paymentFeeMinor(amountMinor: number): number {
  const fee = applyBasisPoints(amountMinor, PAYMENT_FEE_BASIS_POINTS) + PAYMENT_FEE_FLAT_MINOR;
  return Math.min(fee, PAYMENT_FEE_CAP_MINOR, amountMinor);
}

/**
 * Fee of a transfer (and of a direct-debit disbursement), by amount band:
 * up to 5,000.00 -> 10.00; up to 50,000.00 -> 25.00; above -> 50.00.
 *
 * @param amountMinor - transfer amount in minor units.
 * @returns the fee in minor units, debited from the balance with the amount.
 */
export function transferFeeMinor(amountMinor: number): number {
  if (amountMinor <= 500_000) return 1_000;
  if (amountMinor <= 5_000_000) return 2_500;
  return 5_000;
}
