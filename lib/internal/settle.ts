// Verify before resend, given time: a payment service can commit a request seconds after
// its load balancer answered 5xx, the connection dropped or the client's timeout fired,
// and its reads can lag its writes. A lookup made at once can miss a record about to
// exist, and the resend that follows would move the money twice, so the reference is
// looked up through a settle window, with backoff, before a resend may go out.
import { delay } from './delay.ts';
import { backoffDelayMs } from './retry-timing.ts';

/**
 * Looks a money request's record up. Resolves to the record, or `undefined` when the
 * service answers 404; rejects when the lookup itself failed.
 *
 * @param deadlineMs - what is left of the call's budget, in milliseconds (`undefined`
 *   without one): the lookup must not outlive the call it serves.
 */
export type ReferenceLookup = (deadlineMs: number | undefined) => Promise<unknown>;

/** What the lookups of one settle window have to go by. */
export interface SettleTiming {
  /** Clock in milliseconds since the epoch. */
  now: () => number;
  /** Random source in [0, 1) for the backoff's jitter. */
  random: () => number;
  /** The caller's signal: aborts a wait between lookups. */
  signal: AbortSignal | undefined;
  /** When the call's budget ends, in milliseconds since the epoch; `Infinity` without one. */
  deadlineAt: number;
  /** Builds the error an abort rejects with. */
  aborted: () => Error;
}

/**
 * What looking a record up through a settle window found: the record; `absent` when the
 * lookup at (or after) the window's end still answered 404; `unsettled` when the call's
 * budget ended first, so nothing can be concluded.
 */
export type Settled = { record: unknown } | 'absent' | 'unsettled';

/**
 * Looks the record up at once, then again with exponential backoff (0.5 s, 1 s, 2 s...
 * up to 8 s, with jitter) until it is found or `windowMs` has passed; the last lookup is
 * made at the window's end. Bounded: at most 6 lookups in a 5 s window, 20 in 60 s.
 *
 * @param lookup - finds the record; `undefined` for 404.
 * @param windowMs - how long to keep looking, in milliseconds from now (0: one lookup).
 * @param timing - clock, jitter, signal, the call's deadline.
 * @returns the record, `'absent'` or `'unsettled'` (see {@link Settled}).
 * @throws what `lookup` rejects with; the abort error when the signal aborts a wait.
 */
export async function lookUpUntilSettled(
  lookup: ReferenceLookup,
  windowMs: number,
  timing: SettleTiming,
): Promise<Settled> {
  const { now, deadlineAt } = timing;
  const end = now() + windowMs;
  for (let lookups = 1; ; lookups++) {
    if (now() >= deadlineAt) return 'unsettled';
    const record = await lookup(deadlineAt === Infinity ? undefined : deadlineAt - now());
    if (record !== undefined) return { record };
    const left = end - now();
    if (left <= 0) return 'absent';
    const wait = Math.min(backoffDelayMs(lookups, { random: timing.random }), left);
    if (now() + wait >= deadlineAt) return 'unsettled';
    await delay(wait, timing.signal, timing.aborted);
  }
}
