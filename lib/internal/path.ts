/**
 * Builds a URL path with every interpolated value percent-encoded as one path segment
 * (`encodeURIComponent`), so ids can never add segments or a query (after the
 * Stainless SDKs' `path` helper).
 *
 * @example
 * ```ts
 * path`/payments/verify/${reference}` // '/payments/verify/ref%2F1' for 'ref/1'
 * ```
 *
 * @throws {RangeError} for a value of `.` or `..`, which URL parsing would resolve away, or
 *   one holding a lone surrogate, which has no UTF-8 form.
 */
export function path(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  let result = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    result += encodeSegment(String(values[i])) + (strings[i + 1] ?? '');
  }
  return result;
}

/**
 * Fills the `:name` parameters of an endpoint path, in order, each value percent-encoded
 * as one segment like {@link path}.
 *
 * @param pattern - e.g. `/disbursements/verify/:reference`.
 * @param values - one value per parameter, in the order they appear.
 * @returns the path to send, e.g. `/disbursements/verify/ref%2F1`.
 * @throws {RangeError} for a value of `.` or `..`, or one holding a lone surrogate.
 */
export function fillPath(pattern: string, values: readonly string[]): string {
  let index = 0;
  return pattern.replace(/:\w+/g, () => encodeSegment(values[index++] ?? ''));
}

// `.` and `..` (even percent-encoded) are resolved away by URL parsing: refuse them. A lone
// surrogate has no UTF-8 form to percent-encode (encodeURIComponent throws URIError): refused
// the same way, so callers handle one error for every value no path can carry.
function encodeSegment(value: string): string {
  if (value === '.' || value === '..') {
    throw new RangeError(`"${value}" cannot be sent as a path segment`);
  }
  try {
    return encodeURIComponent(value);
  } catch (error) {
    if (!(error instanceof URIError)) throw error;
    throw new RangeError('a path segment cannot hold a lone surrogate', { cause: error });
  }
}
