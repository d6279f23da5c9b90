/**
 * When a money event that could not be confirmed yet is checked again: 10 s, 1 min, 5 min,
 * 30 min, 2 h, 6 h and 24 h after the previous check. The short steps catch a record that
 * is merely late to show (a webhook sent before the commit is visible, a transfer still
 * `processing` for seconds); the long ones ride out an outage of the payment service.
 * After the last check (about 33.6 h after the event arrived) an event still not confirmed
 * is given up as `unconfirmed`, so an operator sees it.
 */
import { MAX_QUEUE_DELAY_SEC } from './retry-schedule.ts';

/**
 * Delay before re-check n (index n - 1), in seconds: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 24 h.
 */
export const CONFIRMATION_DELAYS_SEC: readonly number[] = [10, 60, 300, 1800, 7200, 21_600, 86_400];

/** When the next check is due and how it is reached. */
export interface NextCheck {
  /** Epoch ms. */
  readonly at: number;
  /**
   * The queue message's `delaySeconds`, or `undefined` when the delay is longer than Queues
   * accepts (12 h): the cron sweeper then starts that check once it is due.
   */
  readonly delaySeconds: number | undefined;
}

/**
 * The next check after `checksDone` checks, or `undefined` when the schedule is over.
 *
 * @param checksDone - checks made so far (1 after the ingress's own).
 * @param now - epoch ms of the check just made.
 */
export function nextConfirmationCheck(checksDone: number, now: number): NextCheck | undefined {
  const delay = CONFIRMATION_DELAYS_SEC[checksDone - 1];
  if (delay === undefined || checksDone < 1) return undefined;
  return { at: now + delay * 1000, delaySeconds: delay <= MAX_QUEUE_DELAY_SEC ? delay : undefined };
}
