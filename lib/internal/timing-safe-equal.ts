const encoder = new TextEncoder();

/**
 * Compares two secrets (tokens, signatures) in time that depends only on their
 * lengths, never on where they first differ. Never compare secrets with `===`.
 *
 * @returns `true` when `a` and `b` are the same string.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  // Walk the longer input whole so the time does not reveal a common prefix.
  const length = Math.max(left.length, right.length);
  let difference = left.length ^ right.length;
  for (let i = 0; i < length; i++) {
    difference |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return difference === 0;
}
