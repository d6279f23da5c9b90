/**
 * Confirmation of money events (DESIGN 4.2, issue 5 point 2): before the relay fans out
 * a webhook that says money moved, it asks the payment service's matching verify
 * endpoint whether the record exists and agrees. The webhook is a hint; the upstream
 * record is the truth.
 */
import { HttpError, UpstreamTimeoutError, UpstreamUnreachableError } from '../http/errors.ts';
import { lookUpstream } from '../upstream/lookup.ts';
import type { UpstreamRoute } from '../upstream/routes.ts';

/** What the ingress stores: `received` (not a money event, or confirmation off), `confirmed` or `unconfirmed`. */
export type ConfirmationStatus = 'received' | 'confirmed' | 'unconfirmed';

/** Seconds the provider is asked to wait before retrying when the upstream could not answer. */
export const CONFIRM_RETRY_AFTER_SEC = 60;

interface MoneyEventRule {
  /** Verify path prefix; the reference is appended as one encoded segment. */
  readonly prefix: string;
  /** The `data` field holding the reference. */
  readonly referenceField: string;
  /** The upstream record statuses that agree with the event. */
  readonly statuses: ReadonlySet<string>;
  /** The amount field of the event's `data` and of the upstream record. */
  readonly amountField: string;
}

const MONEY_EVENTS: Readonly<Record<string, MoneyEventRule>> = {
  charge_success: {
    prefix: '/payments/verify',
    referenceField: 'reference',
    statuses: new Set(['success']),
    amountField: 'amount',
  },
  disbursement_success: {
    prefix: '/disbursements/verify',
    referenceField: 'reference',
    statuses: new Set(['success']),
    amountField: 'amount',
  },
  direct_debit_success: {
    prefix: '/direct-debits/status',
    referenceField: 'payment_reference',
    statuses: new Set(['success']),
    amountField: 'debit_amount',
  },
  direct_debit_failure: {
    prefix: '/direct-debits/status',
    referenceField: 'payment_reference',
    statuses: new Set(['failed', 'failure']),
    amountField: 'debit_amount',
  },
};

// The verify endpoints are signed GETs; only `upstreamAuth` matters to lookUpstream.
const VERIFY_ROUTE: UpstreamRoute = {
  name: 'relay.confirm',
  method: 'GET',
  pattern: '/webhooks/confirm',
  idempotency: 'none',
  upstreamAuth: 'signed',
  body: undefined,
  query: undefined,
  cache: undefined,
  lookup: undefined,
};

/**
 * Whether `eventType` is a money event that is confirmed before fan-out.
 *
 * @param eventType - the envelope's `event_type`.
 */
export function isMoneyEvent(eventType: string): boolean {
  return Object.hasOwn(MONEY_EVENTS, eventType);
}

/**
 * Whether confirmation is on: `CONFIRM_MONEY_EVENTS` is anything but `false`, `0`, `off`
 * or `no` (case-insensitive).
 *
 * @default true (wrangler.toml `[vars]`; an unset or empty var also means on)
 */
export function confirmationEnabled(env: Pick<Env, 'CONFIRM_MONEY_EVENTS'>): boolean {
  const value = (env.CONFIRM_MONEY_EVENTS ?? '').trim().toLowerCase();
  return !['false', '0', 'off', 'no'].includes(value);
}

/**
 * Decides the stored status of an incoming event (issue 5 point 2). Non-money events,
 * or every event when `CONFIRM_MONEY_EVENTS` is off, are `received` without any lookup.
 * A money event is `confirmed` when the upstream record exists, its status agrees
 * (`success` for `*_success`; `failed`/`failure` for `direct_debit_failure`) and its
 * amount equals the event's when both carry one; it is `unconfirmed` when the record is
 * missing (404), disagrees, or the event names no reference.
 *
 * @param env - upstream settings and credentials, `CONFIRM_MONEY_EVENTS`.
 * @param eventType - the envelope's `event_type`.
 * @param data - the envelope's `data`.
 * @param requestId - sent upstream as `X-Request-Id`.
 * @returns the status to store; only `confirmed` and `received` events are fanned out.
 * @throws {HttpError} 503 `upstream_unreachable` with `Retry-After` when the upstream
 *   cannot answer (network error, timeout, 5xx, or any other non-2xx but 404): the event
 *   must then not be stored, so the provider's retry is not taken for a duplicate.
 *
 * @example
 * ```ts
 * const status = await confirmWebhookEvent(env, envelope.event_type, envelope.data, requestId);
 * ```
 */
export async function confirmWebhookEvent(
  env: Env,
  eventType: string,
  data: unknown,
  requestId: string,
): Promise<ConfirmationStatus> {
  const rule = MONEY_EVENTS[eventType];
  if (rule === undefined || !confirmationEnabled(env)) return 'received';
  const fields = asObject(data);
  const reference = fields?.[rule.referenceField];
  if (typeof reference !== 'string' || reference === '') return 'unconfirmed';
  let response: Awaited<ReturnType<typeof lookUpstream>>;
  try {
    response = await lookUpstream(
      env,
      VERIFY_ROUTE,
      `${rule.prefix}/${encodeURIComponent(reference)}`,
      requestId,
    );
  } catch (error) {
    if (error instanceof UpstreamTimeoutError || error instanceof UpstreamUnreachableError) {
      throw unavailable(error);
    }
    throw error;
  }
  if (response.status === 404) return 'unconfirmed';
  if (response.status < 200 || response.status > 299) throw unavailable(undefined);
  const record = upstreamRecord(response.body);
  if (record === undefined) throw unavailable(undefined);
  return agrees(rule, fields ?? {}, record) ? 'confirmed' : 'unconfirmed';
}

function agrees(
  rule: MoneyEventRule,
  event: Record<string, unknown>,
  record: Record<string, unknown>,
): boolean {
  const status = record.status;
  if (typeof status !== 'string' || !rule.statuses.has(status.toLowerCase())) return false;
  const claimed = event[rule.amountField];
  const actual = record[rule.amountField];
  if (claimed === undefined || claimed === null || actual === undefined || actual === null) {
    return true;
  }
  const a = canonicalAmount(claimed);
  return a !== undefined && a === canonicalAmount(actual);
}

/** The record of a verify answer: `data` when enveloped, the body itself when flat. */
function upstreamRecord(body: Uint8Array): Record<string, unknown> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return undefined;
  }
  const top = asObject(json);
  if (top === undefined) return undefined;
  return asObject(top.data) ?? top;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * A decimal amount (major units, number or string) as canonical text, compared as text
 * so no binary float arithmetic is involved: `5000`, `"5000.00"` and `5e3` are equal.
 */
function canonicalAmount(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Numbers print in shortest round-trip form; expand exponents for large/small ones.
    text =
      Math.abs(value) >= 1e21 || (value !== 0 && Math.abs(value) < 1e-6)
        ? value.toFixed(20)
        : String(value);
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return undefined;
  }
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (match === null) return undefined;
  const whole = (match[2] ?? '').replace(/^0+(?=\d)/, '');
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  const sign = match[1] === '-' && (whole !== '0' || fraction !== '') ? '-' : '';
  return `${sign}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

function unavailable(cause: unknown): HttpError {
  return new HttpError(
    503,
    'upstream_unreachable',
    'The payment service could not confirm the event; retry later',
    { headers: { 'Retry-After': String(CONFIRM_RETRY_AFTER_SEC) }, cause },
  );
}
