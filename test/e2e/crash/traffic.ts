/**
 * The callers' side of the crash test: money POSTs through the gateway, each with an
 * Idempotency-Key, sent once, retried with the same key and the same bytes until the
 * gateway gives a final response, and replayed.
 */

/** The caller token of `.dev.vars.example`. */
export const CALLER_TOKEN = 'dev-gateway-token';

/** The longest wait between two retries of one key, in milliseconds. */
const MAX_RETRY_WAIT_MS = 3000;
/** The wait after an answerless attempt (connection refused or reset), in milliseconds. */
const NO_ANSWER_WAIT_MS = 500;
/** The time one attempt may take, in milliseconds (past the sandbox's longest hold). */
const ATTEMPT_TIMEOUT_MS = 15_000;

/** One idempotent money request. */
export interface MoneyRequest {
  readonly kind: 'transfer' | 'payment';
  /** The merchant reference, also the Idempotency-Key. */
  readonly reference: string;
  /** `/disbursements/initialize` or `/payments/initialize`. */
  readonly path: string;
  /** The exact JSON body, the same on every retry. */
  readonly body: string;
}

/** What the gateway answered. */
export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

/** One attempt: a response, or the network error that came instead. */
export type Attempt = { readonly answer: Answer } | { readonly error: string };

/** A transfer of `1000 + index` NGN to the README's account. */
export function transferRequest(run: string, index: number): MoneyRequest {
  const reference = `crash-${run}-payout-${index}`;
  return {
    kind: 'transfer',
    reference,
    path: '/disbursements/initialize',
    body: JSON.stringify({
      reference,
      amount: 1000 + index,
      currency: 'NGN',
      customer_name: 'Grace Hopper',
      customer_email: 'grace@example.com',
      destination_bank_code: '058',
      destination_bank_account: '0123456789',
      destination_bank_name: 'GTBank',
      narration: `crash test ${index}`,
    }),
  };
}

/** A payment of `500.00 + index` NGN, paid later at its checkout. */
export function paymentRequest(run: string, index: number): MoneyRequest {
  const reference = `crash-${run}-order-${index}`;
  return {
    kind: 'payment',
    reference,
    path: '/payments/initialize',
    body: JSON.stringify({
      email: 'ada@example.com',
      amount: `${500 + index}.00`,
      currency: 'NGN',
      reference,
      callback_url: 'https://shop.example/thanks',
    }),
  };
}

/**
 * Sends one attempt of a request.
 *
 * @param gatewayUrl - the gateway's base URL.
 * @param request - the request.
 * @returns the response, or the error when none came (the gateway down or killed mid-request).
 */
export async function sendOnce(gatewayUrl: string, request: MoneyRequest): Promise<Attempt> {
  try {
    const response = await fetch(`${gatewayUrl}${request.path}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${CALLER_TOKEN}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': request.reference,
      },
      body: request.body,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    return {
      answer: { status: response.status, body: await response.text(), headers: response.headers },
    };
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/** Whether a response is the gateway's "another request holds this key" (409 in flight). */
function inFlight(answer: Answer): boolean {
  return answer.status === 409 && answer.body.includes('"idempotency_key_in_flight"');
}

/** What {@link sendUntilFinal} ended with. */
export interface FinalAnswer {
  readonly answer: Answer;
  /** Attempts made, the final one included. */
  readonly attempts: number;
  /** How many of them were answered 409 `idempotency_key_in_flight`. */
  readonly inFlightAnswers: number;
}

/**
 * Retries a request with the same key and body until a response that is not 409
 * `idempotency_key_in_flight` comes, waiting `Retry-After` (capped at 3 s) after a 409 and
 * 0.5 s after an attempt without a response, as a careful caller does.
 *
 * @param gatewayUrl - the gateway's base URL.
 * @param request - the request.
 * @param maxAttempts - the most attempts.
 * @returns the final response with the count of attempts.
 * @throws {Error} naming the key when no final response came within `maxAttempts`.
 */
export async function sendUntilFinal(
  gatewayUrl: string,
  request: MoneyRequest,
  maxAttempts: number,
): Promise<FinalAnswer> {
  let inFlightAnswers = 0;
  let last = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const result = await sendOnce(gatewayUrl, request);
    if ('answer' in result && !inFlight(result.answer)) {
      return { answer: result.answer, attempts: attempt, inFlightAnswers };
    }
    let waitMs = NO_ANSWER_WAIT_MS;
    if ('answer' in result) {
      inFlightAnswers++;
      const seconds = Number(result.answer.headers.get('retry-after') ?? '1');
      waitMs = Math.min(Math.max(seconds, 0.25) * 1000, MAX_RETRY_WAIT_MS);
      last = `${result.answer.status} ${result.answer.body}`;
    } else last = result.error;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  throw new Error(`${request.reference}: no final answer in ${maxAttempts} attempts (${last})`);
}

/**
 * Runs `task` over `items`, at most `concurrency` at a time, keeping the order of results.
 *
 * @param items - the inputs.
 * @param concurrency - the most tasks running at once (>= 1).
 * @param task - the work per item.
 * @returns the results, in the order of `items`.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
