// How far a due time is from now, in the words an operator reads at a glance ("in 4 min").
// The absolute time stays beside it (format.ts); this is the countdown.

const MINUTE_S = 60;
const HOUR_S = 60 * MINUTE_S;
const DAY_S = 24 * HOUR_S;

/**
 * The time left until `iso` as a phrase: `in 45 s`, `in 4 min`, `in 2 h 5 min`, `in 1 d 3 h`,
 * or `now` when it is due or past (the relay takes it up at its next turn).
 *
 * @param iso - an ISO 8601 time from the API.
 * @param nowMs - the current time, epoch milliseconds. @default Date.now()
 * @returns the phrase; `iso` itself when it is not a time.
 */
export function dueIn(iso: string, nowMs: number = Date.now()): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  // Whole seconds, rounded up: "in 1 s" until it is due, never "in 0 s".
  const left = Math.ceil((at - nowMs) / 1000);
  if (left <= 0) return 'now';
  if (left < MINUTE_S) return `in ${left} s`;
  if (left < HOUR_S) return `in ${Math.round(left / MINUTE_S)} min`;
  if (left < DAY_S) {
    const minutes = Math.round((left % HOUR_S) / MINUTE_S);
    const hours = Math.floor(left / HOUR_S) + (minutes === 60 ? 1 : 0);
    return minutes === 0 || minutes === 60 ? `in ${hours} h` : `in ${hours} h ${minutes} min`;
  }
  const hours = Math.round((left % DAY_S) / HOUR_S);
  const days = Math.floor(left / DAY_S) + (hours === 24 ? 1 : 0);
  return hours === 0 || hours === 24 ? `in ${days} d` : `in ${days} d ${hours} h`;
}
