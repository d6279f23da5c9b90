/**
 * The stored form of event bodies and answer excerpts (worker/db/compact-body.ts) inside
 * workerd, whose `CompressionStream` the relay uses: texts come back code unit for code unit,
 * short or incompressible ones stay text, and the UTF-8 cut never splits a character.
 */
import { describe, expect, it } from 'vitest';
import { compactText, expandText, utf8Prefix } from '../../../worker/db/compact-body.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** A sandbox `charge_success` body as the payment service sends it (whitespace kept). */
const CHARGE_BODY = `{"event_type":"charge_success","status":"success","message":"Payment completed successfully","event_id":"evt_3b0e8f8e-8d1c-4d6e-9f55-0c3c2f1a9b7d","timestamp":"2026-11-27T10:00:00.000Z","data":{"reference":"pay_7f3c9a2e41","amount":"5000.00","currency":"NGN","metadata":{"note":"caf\u00e9 \u{1F600}"}}}\n`;

describe('compact-body', () => {
  describe('compactText / expandText', () => {
    it('should store a typical event body as fewer bytes and give it back exactly', async () => {
      const stored = await compactText(CHARGE_BODY);
      expect(stored).toBeInstanceOf(Uint8Array);
      expect((stored as Uint8Array).byteLength).toBeLessThan(utf8(CHARGE_BODY).byteLength);
      expect(utf8(await expandText(stored))).toEqual(utf8(CHARGE_BODY));
    });

    it('should read a BLOB in the forms D1 hands back (array of byte values, ArrayBuffer)', async () => {
      const stored = (await compactText(CHARGE_BODY)) as Uint8Array;
      expect(await expandText(Array.from(stored))).toBe(CHARGE_BODY);
      expect(await expandText(stored.slice().buffer)).toBe(CHARGE_BODY);
    });

    it('should keep a short text as text, untried', async () => {
      expect(await compactText('{"received":true}')).toBe('{"received":true}');
      expect(await compactText('')).toBe('');
    });

    it('should keep a text that does not compress as text', async () => {
      // Random printable ASCII: raw DEFLATE saves a few bytes at most (6.6 bits of 8 per
      // character, less its block header), not the tenth it must save.
      const noise = Array.from(crypto.getRandomValues(new Uint8Array(200)), (n) =>
        String.fromCharCode(0x21 + (n % 94)),
      ).join('');
      expect(await compactText(noise)).toBe(noise);
    });

    it('should give back every code point, a leading BOM, astral ones and line ends included', async () => {
      const text = `\ufeff${'\u{1F600}\u00e9\r\n\t\u2028'.repeat(50)}${CHARGE_BODY}`;
      const stored = await compactText(text);
      expect(stored).toBeInstanceOf(Uint8Array);
      expect(await expandText(stored)).toBe(text);
    });

    it('should refuse a BLOB that is not raw DEFLATE of UTF-8 (a corrupted row)', async () => {
      await expect(expandText(new Uint8Array([0xff, 0xff, 0xff, 0xff]))).rejects.toThrow();
    });
  });

  describe('utf8Prefix', () => {
    it('should keep a text that fits and cut one that does not to the bound', () => {
      expect(utf8Prefix('abc', 3)).toBe('abc');
      expect(utf8Prefix('x'.repeat(5000), 2048)).toBe('x'.repeat(2048));
    });

    it('should cut between characters, never inside one or inside a surrogate pair', () => {
      // U+20AC is 3 bytes: 682 of them are 2046 bytes, a 683rd would be 2049.
      expect(utf8Prefix('\u20ac'.repeat(1000), 2048)).toBe('\u20ac'.repeat(682));
      // U+1F600 is 4 bytes and 2 UTF-16 units: 512 of them fill 2048 bytes exactly.
      expect(utf8Prefix('\u{1F600}'.repeat(600), 2048)).toBe('\u{1F600}'.repeat(512));
      expect(utf8Prefix('a\u{1F600}', 4)).toBe('a');
    });

    it('should bound the UTF-8 of U+FFFD, 3 bytes each, that undecodable answers become', () => {
      const cut = utf8Prefix('\ufffd'.repeat(2048), 2048);
      expect(utf8(cut).byteLength).toBeLessThanOrEqual(2048);
      expect(cut).toBe('\ufffd'.repeat(682));
    });
  });
});
