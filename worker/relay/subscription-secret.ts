/**
 * Subscription signing secrets: Standard Webhooks `whsec_<base64>` secrets, and how
 * long a rotated-out secret stays in use.
 */

/** Random bytes in a new secret (Standard Webhooks accepts 24 to 64). */
const SUBSCRIPTION_SECRET_BYTES = 32;

/** How long the secret replaced by a rotation is still signed with: 24 h, in milliseconds. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 60 * 60 * 1000;

/**
 * A new signing secret: `whsec_` followed by the standard base64 of
 * {@link SUBSCRIPTION_SECRET_BYTES} bytes from `crypto.getRandomValues`, the form every
 * Standard Webhooks library accepts.
 *
 * @returns e.g. `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw...`.
 */
export function generateSubscriptionSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SUBSCRIPTION_SECRET_BYTES));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
