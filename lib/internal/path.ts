/**
 * Builds a URL path with every interpolated value percent-encoded as one path segment
 * (`encodeURIComponent`), so ids can never add segments or a query (STYLE: Runtime
 * isolation; after the Stainless SDKs' `path` helper).
 *
 * @example
 * ```ts
 * path`/payments/verify/${reference}` // '/payments/verify/ref%2F1' for 'ref/1'
 * ```
 *
 * @throws {RangeError} for a value of `.` or `..`, which URL parsing would resolve away.
 */
export function path(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  let result = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    result += encodeSegment(String(values[i])) + (strings[i + 1] ?? '');
  }
  return result;
}

// `.` and `..` (even percent-encoded) are resolved away by URL parsing: refuse them.
function encodeSegment(value: string): string {
  if (value === '.' || value === '..') {
    throw new RangeError(`"${value}" cannot be sent as a path segment`);
  }
  return encodeURIComponent(value);
}
