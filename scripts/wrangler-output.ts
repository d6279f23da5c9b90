// What `npm start` shows of `wrangler dev`'s output: everything but the noise a local stack
// does not need (the README says what; `--verbose` shows it all).
import { stripVTControlCharacters } from 'node:util';

/** The first line of the bindings table; the table ends at the next empty line. */
const BINDINGS_HEADER = 'Your Worker has access to the following bindings:';

/** The warning that opens a block of indented lines about local cron triggers. */
const CRON_WARNING = /Scheduled Workers are not automatically triggered/;

/** The warning of the failed `Request.cf` fetch; the error's lines and stack follow it. */
const CF_FETCH_WARNING = /Unable to fetch the `Request\.cf` object/;

/** The lines of that error: `Error: getaddrinfo ...` and its `at ...` frames. */
const CF_FETCH_ERROR = /^(Error: (getaddrinfo|connect|fetch failed)|\s+at )/;

/** What the filter is skipping, if anything. */
type Skipping = 'nothing' | 'bindings' | 'cron note' | 'cf error';

/**
 * A filter of wrangler dev's output lines, one stream at a time (it keeps which block it is
 * skipping between lines).
 *
 * @example
 * ```ts
 * const quiet = new WranglerOutputFilter();
 * for (const line of lines) {
 *   const shown = quiet.filter(line);
 *   if (shown !== null) console.log(shown);
 * }
 * ```
 */
export class WranglerOutputFilter {
  #skipping: Skipping = 'nothing';

  /**
   * One line, without its line break.
   *
   * @returns the line to show (the banner without its update notice), or `null` to drop it.
   */
  filter(line: string): string | null {
    const plain = stripVTControlCharacters(line);
    if (this.#skipping === 'bindings') {
      if (plain.trim() === '') this.#skipping = 'nothing';
      return null;
    }
    if (this.#skipping === 'cron note') {
      if (plain.trim() === '' || /^\s/.test(plain)) return null;
      this.#skipping = 'nothing';
    }
    if (this.#skipping === 'cf error') {
      if (CF_FETCH_ERROR.test(plain)) return null;
      this.#skipping = 'nothing';
    }
    if (plain.trim() === BINDINGS_HEADER) {
      this.#skipping = 'bindings';
      return null;
    }
    if (CRON_WARNING.test(plain)) {
      this.#skipping = 'cron note';
      return null;
    }
    if (CF_FETCH_WARNING.test(plain)) {
      this.#skipping = 'cf error';
      return null;
    }
    return line.replace(/ \(update available [^)]*\)/, '');
  }
}
