// How far a due time is from now, in the words an operator reads at a glance ("in 4 min").
// The absolute time stays beside it (format.ts); this is the countdown.

const MINUTE_S = 60;
const HOUR_S = 60 * MINUTE_S;

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
  // Rounded to the unit shown, then split, so 59 min 40 s reads "in 1 h", not "in 60 min".
  const minutes = Math.round(left / MINUTE_S);
  if (minutes < 60) return `in ${minutes} min`;
  if (minutes < 24 * 60) {
    const rest = minutes % 60;
    return `in ${Math.floor(minutes / 60)} h${rest === 0 ? '' : ` ${rest} min`}`;
  }
  const hours = Math.round(left / HOUR_S);
  const rest = hours % 24;
  return `in ${Math.floor(hours / 24)} d${rest === 0 ? '' : ` ${rest} h`}`;
}
