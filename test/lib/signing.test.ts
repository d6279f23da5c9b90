import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRequest, verifyRequestSignature } from '../../lib/signing.ts';
import { signingSuite } from '../shared/signing-suite.ts';

signingSuite('node');

describe('signing against node:crypto', () => {
  it('should produce the createHmac digest for any secret, timestamp and body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, unit: 'grapheme' }),
        fc.integer({ min: 0, max: 9_999_999_999 }),
        fc.string({ unit: 'grapheme' }),
        async (secret, timestamp, body) => {
          const headers = await signRequest({ keyId: 'k', secret, body, timestamp });
          const expected = createHmac('sha256', secret)
            .update(`${timestamp}:${body}`)
            .digest('hex');
          expect(headers['X-Signature']).toBe(expected);
          await verifyRequestSignature({
            secret,
            body,
            headers: { ...headers },
            now: () => timestamp * 1000,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('should sign arbitrary bytes like createHmac', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 512 }), async (bytes) => {
        const headers = await signRequest({ keyId: 'k', secret: 's', body: bytes, timestamp: 42 });
        const expected = createHmac('sha256', 's')
          .update(Buffer.concat([Buffer.from('42:'), bytes]))
          .digest('hex');
        expect(headers['X-Signature']).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });
});
