/**
 * Fails closed on a `secret` option that is missing or empty. Verifying with it would
 * prove nothing and signing with it would make signatures anyone can forge, so a
 * deployment that lost its secret (an unset environment variable reads as `undefined`)
 * stops here instead of letting unchecked events or requests through.
 *
 * @param secret - what the caller passed as `secret` (the stack names the function).
 * @returns `secret`, now known to be a non-empty string.
 * @throws {TypeError} naming the `secret` option when it is not a non-empty string.
 */
export function requireSecret(secret: unknown): string {
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('`secret` is missing or empty');
  }
  return secret;
}
