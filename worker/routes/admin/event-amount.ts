/**
 * The amount and currency of a money event, as the admin event list shows them: read from the
 * stored body through the SDK's webhook parsing (its typed, validated event objects), so the
 * gateway never reads an event's fields a second way.
 */
import { parseMinorUnits, parseWebhookEventUnverified, toMajorUnits } from '../../../lib/index.ts';

/**
 * The event types whose amount the list shows: the money events the spec names
 * (docs/payments-api.md, "Events"). Only their bodies are read by the list query.
 */
export const AMOUNT_EVENT_TYPES: readonly string[] = Object.freeze([
  'charge_success',
  'disbursement_success',
  'direct_debit_success',
  'direct_debit_failure',
]);

/** An event's amount in major units as the SDK gives it, and its currency code. */
export interface EventAmount {
  /** Major units, a JSON number with at most two fraction digits (`5000.5`); `null` when none. */
  readonly amount: number | null;
  /** The ISO 4217 code of the body (`NGN`); `null` when the event carries none. */
  readonly currency: string | null;
}

const NONE: EventAmount = Object.freeze({ amount: null, currency: null });

/**
 * The amount and currency of a stored event body. `charge_success` and `disbursement_success`
 * carry `amount` and `currency`; `direct_debit_success` carries `debit_amount` and no currency
 * (the spec shows none); the SDK types `direct_debit_failure`'s `data` as an open object, so it
 * has none either. The signature is not checked again: the ingress verified it before storing.
 *
 * @param rawBody - the body as stored, or `null` when the list did not read it (not a money event).
 * @returns the amount (major units, checked to be an exact amount with at most two fraction
 *   digits, else `null`) and the currency; both `null` for other events and for a body that is
 *   not the SDK's shape of its type.
 */
export function amountOf(rawBody: string | null): EventAmount {
  if (rawBody === null) return NONE;
  let event: ReturnType<typeof parseWebhookEventUnverified>;
  try {
    event = parseWebhookEventUnverified(rawBody);
  } catch {
    // The ingress checks the envelope, not each type's data: an odd body shows no amount.
    return NONE;
  }
  if (!event.known) return NONE;
  switch (event.event_type) {
    case 'charge_success':
    case 'disbursement_success':
      return { amount: exact(event.data.amount), currency: event.data.currency };
    case 'direct_debit_success':
      return { amount: exact(event.data.debit_amount), currency: null };
    default:
      return NONE;
  }
}

// The SDK's number, kept only when it is an exact amount (no third fraction digit, not negative).
function exact(amount: number): number | null {
  const minor = parseMinorUnits(amount);
  return minor === undefined ? null : toMajorUnits(minor);
}
