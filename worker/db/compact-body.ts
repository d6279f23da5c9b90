/**
 * How the relay stores its largest texts, the event bodies (`webhook_events.raw_body`) and the
 * subscribers' answer excerpts (`delivery_attempts.response_excerpt`): as the text itself, or,
 * when that is clearly smaller, as a BLOB of its UTF-8 bytes compressed with raw DEFLATE (RFC 1951,
 * the Web standard `CompressionStream('deflate-raw')`). SQLite's `typeof()` tells the two
 * apart (`'text'` or `'blob'`), so rows stored as text before compression existed stay
 * readable as they are, and no table is rewritten. The choice and its measurements are in
 * docs/assumptions.md, "Event bodies and answer excerpts stored compressed".
 */

/** A text as stored: the text itself, or its UTF-8 bytes compressed with raw DEFLATE. */
export type StoredText = string | Uint8Array;

/**
 * Texts shorter than this, in UTF-16 code units, are stored as they are without trying:
 * raw DEFLATE of a short JSON text saves a few bytes at best, not worth its CPU.
 */
const COMPACT_MIN_LENGTH = 160;

/**
 * Raw DEFLATE is kept only when it takes at most this share of the text's UTF-8 bytes: a saving
 * of a few bytes is not worth inflating the value on every read.
 */
const COMPACT_MAX_RATIO = 0.9;

/**
 * The stored form of a text: its raw DEFLATE when that saves at least a tenth of its UTF-8
 * bytes, else the text itself (short texts are not tried, see {@link COMPACT_MIN_LENGTH}).
 * Decoding it with {@link expandText} gives the same text back, code unit for code unit,
 * for every well-formed string (a lone surrogate would come back as U+FFFD).
 *
 * @param text - the text to store.
 * @returns what to bind to the column: a `string` (stored as TEXT) or bytes (stored as BLOB).
 */
export async function compactText(text: string): Promise<StoredText> {
  if (text.length < COMPACT_MIN_LENGTH) return text;
  // Always a fresh ArrayBuffer; some typings widen it to ArrayBufferLike.
  const utf8 = new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
  const deflated = await pipeBytes(utf8, new CompressionStream('deflate-raw'));
  return deflated.byteLength <= utf8.byteLength * COMPACT_MAX_RATIO ? deflated : text;
}

/**
 * A column value as D1 returns it: TEXT as a `string`, BLOB as an array of byte values
 * (its JSON form), or bytes.
 */
export type StoredValue = string | readonly number[] | ArrayBuffer | ArrayBufferView;

/**
 * The text a stored value holds (see {@link compactText}).
 *
 * @param value - the column's value: a `string` is returned as is, bytes are inflated.
 * @returns the text.
 * @throws {TypeError} when a BLOB is not raw DEFLATE of UTF-8 text (a corrupted row).
 */
export async function expandText(value: StoredValue): Promise<string> {
  if (typeof value === 'string') return value;
  const bytes = toBytes(value);
  const utf8 = await pipeBytes(bytes, new DecompressionStream('deflate-raw'));
  // ignoreBOM keeps a leading U+FEFF: the text comes back whole, not decoded as a file.
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(utf8);
}

/**
 * {@link expandText} of a nullable column: `null` stays `null`.
 *
 * @param value - the column's value, or `null`.
 */
export async function expandNullableText(value: StoredValue | null): Promise<string | null> {
  return value === null ? null : expandText(value);
}

/**
 * The longest start of `text` whose UTF-8 encoding fits in `maxBytes`, cut between
 * characters (never inside a surrogate pair).
 *
 * @param text - any text.
 * @param maxBytes - the bound, in bytes of UTF-8.
 * @returns `text` itself when it fits, else its longest start that does.
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  // Every UTF-16 code unit takes at most 3 bytes of UTF-8 (a pair takes 4 for 2 units).
  if (text.length * 3 <= maxBytes) return text;
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return read === text.length ? text : text.slice(0, read);
}

/** Bytes of a BLOB value in any of the forms D1 hands back (a copy unless D1 handed an ArrayBuffer). */
function toBytes(value: Exclude<StoredValue, string>): Uint8Array<ArrayBuffer> {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
  }
  return Uint8Array.from(value);
}

/** Runs `bytes` through a compression or decompression stream, whole. */
async function pipeBytes(
  bytes: Uint8Array<ArrayBuffer>,
  transform: CompressionStream | DecompressionStream,
): Promise<Uint8Array> {
  const output = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(output).arrayBuffer());
}
