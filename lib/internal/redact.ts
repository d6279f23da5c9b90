import type { Issue } from '../errors.ts';

// The one rule for personal data in text the SDK renders (error messages, the URLs its
// hooks and logger receive) and in the gateway's log lines (docs/assumptions.md).

// An email address of the usual form: a local part of letters, digits and `._%+-`, an `@`
// (or `%40`, as a URL path or query carries it), then a domain of two or more labels. The
// parts are bounded (64 and 63 characters, the limits of RFC 5321) so a long run of
// letters costs linear time, not quadratic.
const EMAIL = /[\w.%+-]{1,64}(?:@|%40)[\w-]{1,63}(?:\.[\w-]{1,63})+/g;

// A possible account number: a run of 10 to 34 digits standing alone (NUBAN is 10; IBAN
// bodies and card numbers fit). Digits inside a longer token (UUID groups, hex, `ref_123...`)
// are not one. The character before is matched, not looked behind, for older browsers.
const ACCOUNT_NUMBER = /(^|[^\w-])\d{6,30}(\d{4})(?![\w-])/g;

/**
 * Masks personal data in free text: every email address becomes `[email]`, every account
 * number keeps its last 4 digits (`account 0123456789` becomes `account ******6789`).
 *
 * @param text - any text headed for an error message, a hook or a log line.
 * @returns the text with both masked; everything else as it was.
 */
export function redactPersonalData(text: string): string {
  return text.replace(EMAIL, '[email]').replace(ACCOUNT_NUMBER, '$1******$2');
}

/**
 * Masks personal data in what each issue says, as {@link redactPersonalData} does; the
 * path names a field, never a value, and is kept.
 */
export function redactIssues(issues: readonly Issue[]): Issue[] {
  return issues.map(({ path, message }) => ({ path, message: redactPersonalData(message) }));
}
