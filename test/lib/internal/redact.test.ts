/**
 * The one masking rule for personal data (the SDK's errors and hooks, the gateway's logs):
 * examples of what it masks and leaves, and a property: whatever surrounds an email address
 * or an account number, neither survives whole.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactPersonalData } from '../../../lib/internal/redact.ts';
import { fuzzRuns } from '../../projects.ts';

/** Cases per property: the tier's count (`FUZZ_RUNS`; 10,000 in the full tier). */
const RUNS = { numRuns: fuzzRuns() } as const;

describe('redactPersonalData', () => {
  it.each([
    ['account 0123456789 failed', 'account ******6789 failed'],
    ['{"account":"01234567890123"}', '{"account":"******0123"}'],
    ['card 4111111111111111', 'card ******1111'],
    ['/virtual-accounts/0123456789?x=1', '/virtual-accounts/******6789?x=1'],
    ['0123456789 and 9876543210', '******6789 and ******3210'],
    ['to grace.hopper@example.com.', 'to [email].'],
    ['{"email":"Ada_L+pay@mail.example.co.uk"}', '{"email":"[email]"}'],
    ['/payments/verify/grace%40example.com', '/payments/verify/[email]'],
    ['0123456789@bank.example', '[email]'],
  ])('should mask %s', (input, expected) => {
    expect(redactPersonalData(input)).toBe(expected);
  });

  it.each([
    ['a short number', 'amount 500000 minor'],
    ['digits inside a UUID', '9b1deb4d-3b7d-4bad-9bdd-123456789012'],
    ['digits inside a token', 'ref_1234567890123abc'],
    ['a run longer than 34 digits', '1'.repeat(35)],
    ['an @ without a domain', 'user@localhost and @handle'],
    ['an address of the gateway', 'POST http://127.0.0.1:8788/disbursements/initialize'],
  ])('should leave %s alone', (_, input) => {
    expect(redactPersonalData(input)).toBe(input);
  });

  // What cannot be part of an account number's run: neither a word character nor `-`.
  const separator = fc.constantFrom(
    ' ',
    '\n',
    ':',
    '/',
    '"',
    "'",
    '=',
    ',',
    '.',
    '(',
    ')',
    '?',
    '&',
    '#',
    ';',
    '<',
    '>',
    'é',
  );
  const accountNumber = fc.stringMatching(/^\d{10,34}$/);
  const label = fc.stringMatching(/^[a-z0-9-]{1,20}$/);
  const email = fc
    .tuple(
      fc.stringMatching(/^[\w.%+-]{1,64}$/),
      fc.array(label, { minLength: 2, maxLength: 4 }),
      fc.boolean(),
    )
    .map(([local, labels, encoded]) => `${local}${encoded ? '%40' : '@'}${labels.join('.')}`);
  const filler = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );

  it('should never leave an account number standing alone in any text', () => {
    fc.assert(
      fc.property(
        filler,
        separator,
        accountNumber,
        separator,
        filler,
        (before, open, account, close, after) => {
          fc.pre(!before.includes(account) && !after.includes(account));
          const redacted = redactPersonalData(`${before}${open}${account}${close}${after}`);
          expect(redacted).not.toContain(account);
        },
      ),
      RUNS,
    );
  });

  it('should never leave an email address in any text, whatever touches it', () => {
    fc.assert(
      fc.property(filler, email, filler, (before, address, after) => {
        fc.pre(!before.includes(address) && !after.includes(address));
        const redacted = redactPersonalData(`${before}${address}${after}`);
        expect(redacted).not.toContain(address);
      }),
      RUNS,
    );
  });

  it('should mask both in one text, in either order', () => {
    fc.assert(
      fc.property(
        filler,
        accountNumber,
        separator,
        email,
        filler,
        fc.boolean(),
        (before, account, gap, address, after, emailFirst) => {
          fc.pre(![before, after, address].some((text) => text.includes(account)));
          const middle = emailFirst ? `${address}${gap}${account}` : `${account}${gap}${address}`;
          const redacted = redactPersonalData(`${before} ${middle} ${after}`);
          expect(redacted).not.toContain(account);
          expect(redacted).not.toContain(address);
        },
      ),
      RUNS,
    );
  });
});
