import { describe, expect, it } from 'vitest';
import { SignatureVerificationError } from '../../lib/errors.ts';
import { signRequest, verifyRequestSignature } from '../../lib/signing.ts';
import vectors from '../fixtures/signing/vectors.json' with { type: 'json' };

const NOW_SEC = 1_700_000_000;
const now = () => NOW_SEC * 1000;
const secret = 'sandbox-secret';
const body = '{"reference":"tr_001","amount":5000}';

async function rejection(promise: Promise<unknown>): Promise<SignatureVerificationError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SignatureVerificationError);
  return error as SignatureVerificationError;
}

/**
 * The request-signing suite (docs/payments-api.md, "Authentication"), run once per runtime: Node in
 * test/lib, workerd in test/worker. Vectors come from OpenSSL (test/fixtures/signing).
 */
export function signingSuite(runtime: string): void {
  describe(`signing (${runtime})`, () => {
    describe('signRequest', () => {
      it.each(vectors.vectors)('should match OpenSSL for timestamp $timestamp', async (vector) => {
        const headers = await signRequest({
          keyId: 'key',
          secret: vector.secret,
          body: vector.body,
          timestamp: vector.timestamp,
        });
        expect(headers['X-Signature']).toBe(vector.signature);
        expect(headers['X-Timestamp']).toBe(String(vector.timestamp));
        expect(headers['X-Key-Id']).toBe('key');
      });

      it('should sign bytes exactly like the same text', async () => {
        const vector = vectors.vectors[5];
        if (vector === undefined) throw new Error('fixture missing');
        const headers = await signRequest({
          keyId: 'key',
          secret: vector.secret,
          body: new TextEncoder().encode(vector.body),
          timestamp: vector.timestamp,
        });
        expect(headers['X-Signature']).toBe(vector.signature);
      });

      it('should take the timestamp from the injected clock in whole seconds', async () => {
        const headers = await signRequest({ keyId: 'k', secret, now: () => 1_700_000_000_999 });
        expect(headers['X-Timestamp']).toBe('1700000000');
        expect(headers['X-Signature']).toBe(vectors.vectors[1]?.signature);
      });

      it('should use an injected SubtleCrypto', async () => {
        let calls = 0;
        const real = crypto.subtle;
        const counting = {
          importKey: (...args: Parameters<SubtleCrypto['importKey']>) => real.importKey(...args),
          sign: (...args: Parameters<SubtleCrypto['sign']>) => {
            calls++;
            return real.sign(...args);
          },
        } as unknown as SubtleCrypto;
        const headers = await signRequest({
          keyId: 'k',
          secret,
          body,
          timestamp: NOW_SEC,
          subtle: counting,
        });
        expect(calls).toBe(1);
        expect(headers['X-Signature']).toBe(vectors.vectors[0]?.signature);
      });

      it('should import the key once per secret', async () => {
        let imports = 0;
        const real = crypto.subtle;
        const counting = {
          importKey: (...args: Parameters<SubtleCrypto['importKey']>) => {
            imports++;
            return real.importKey(...args);
          },
          sign: (...args: Parameters<SubtleCrypto['sign']>) => real.sign(...args),
        } as unknown as SubtleCrypto;
        for (let i = 0; i < 5; i++) {
          await signRequest({ keyId: 'k', secret, body: `${i}`, subtle: counting });
        }
        await signRequest({ keyId: 'k', secret: 'other', subtle: counting });
        expect(imports).toBe(2);
      });

      it.each([
        ['undefined', undefined],
        ['null', null],
        ['empty', ''],
      ])('should refuse to sign with a secret that is %s', async (_, missing) => {
        await expect(signRequest({ keyId: 'k', secret: missing as string })).rejects.toThrow(
          new TypeError('`secret` is missing or empty'),
        );
      });
    });

    describe('verifyRequestSignature', () => {
      const signed = vectors.vectors[0];
      if (signed === undefined) throw new Error('fixture missing');
      const headers = { 'X-Timestamp': String(signed.timestamp), 'X-Signature': signed.signature };

      it('should accept a valid signature', async () => {
        await expect(
          verifyRequestSignature({ secret, body, headers, now }),
        ).resolves.toBeUndefined();
      });

      it('should accept a Headers object with any header case', async () => {
        const received = new Headers({
          'x-timestamp': headers['X-Timestamp'],
          'X-SIGNATURE': signed.signature,
        });
        await expect(
          verifyRequestSignature({ secret, body, headers: received, now }),
        ).resolves.toBeUndefined();
      });

      it('should accept an uppercase hex signature', async () => {
        const upper = { ...headers, 'X-Signature': signed.signature.toUpperCase() };
        await expect(
          verifyRequestSignature({ secret, body, headers: upper, now }),
        ).resolves.toBeUndefined();
      });

      it('should reject a tampered body', async () => {
        const error = await rejection(
          verifyRequestSignature({ secret, body: body.replace('5000', '5001'), headers, now }),
        );
        expect(error.reason).toBe('signature_mismatch');
      });

      it('should reject a body changed only in whitespace', async () => {
        const error = await rejection(
          verifyRequestSignature({ secret, body: `${body} `, headers, now }),
        );
        expect(error.reason).toBe('signature_mismatch');
      });

      it('should reject a wrong key', async () => {
        const error = await rejection(
          verifyRequestSignature({ secret: 'another-secret', body, headers, now }),
        );
        expect(error.reason).toBe('signature_mismatch');
      });

      it('should reject a timestamp more than 300 s old', async () => {
        const error = await rejection(
          verifyRequestSignature({ secret, body, headers, now: () => (NOW_SEC + 301) * 1000 }),
        );
        expect(error.reason).toBe('timestamp_out_of_tolerance');
      });

      it('should reject a timestamp more than 300 s in the future', async () => {
        const error = await rejection(
          verifyRequestSignature({ secret, body, headers, now: () => (NOW_SEC - 301) * 1000 }),
        );
        expect(error.reason).toBe('timestamp_out_of_tolerance');
      });

      it('should accept timestamps exactly 300 s away on either side', async () => {
        for (const offset of [300, -300]) {
          await expect(
            verifyRequestSignature({ secret, body, headers, now: () => (NOW_SEC + offset) * 1000 }),
          ).resolves.toBeUndefined();
        }
      });

      it('should honour a custom tolerance', async () => {
        const error = await rejection(
          verifyRequestSignature({
            secret,
            body,
            headers,
            toleranceSec: 10,
            now: () => (NOW_SEC + 11) * 1000,
          }),
        );
        expect(error.reason).toBe('timestamp_out_of_tolerance');
      });

      it('should reject missing headers', async () => {
        const error = await rejection(
          verifyRequestSignature({
            secret,
            body,
            headers: { 'X-Timestamp': headers['X-Timestamp'] },
            now,
          }),
        );
        expect(error.reason).toBe('missing_header');
      });

      it('should reject a non-numeric timestamp', async () => {
        const error = await rejection(
          verifyRequestSignature({
            secret,
            body,
            headers: { ...headers, 'X-Timestamp': '17e8' },
            now,
          }),
        );
        expect(error.reason).toBe('malformed_timestamp');
      });

      it('should reject a signature that is not 64 hex characters', async () => {
        for (const signature of ['', 'zz'.repeat(32), signed.signature.slice(2)]) {
          const error = await rejection(
            verifyRequestSignature({
              secret,
              body,
              headers: { ...headers, 'X-Signature': signature },
              now,
            }),
          );
          expect(error.reason).toBe('malformed_signature');
        }
      });

      it.each([
        ['undefined', undefined],
        ['null', null],
        ['empty', ''],
      ])(
        'should fail closed with a TypeError naming `secret` when it is %s',
        async (_, missing) => {
          // Valid headers for the body: only the missing secret can stop it.
          const error = await verifyRequestSignature({
            secret: missing as string,
            body,
            headers,
            now,
          }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(TypeError);
          expect((error as Error).message).toBe('`secret` is missing or empty');
        },
      );

      it('should fail closed on a missing secret before looking at the headers', async () => {
        await expect(
          verifyRequestSignature({ secret: undefined as unknown as string, body, headers: {} }),
        ).rejects.toThrow(TypeError);
      });

      it('should verify what signRequest produced, for an empty body', async () => {
        const made = await signRequest({ keyId: 'k', secret, now });
        await expect(
          verifyRequestSignature({ secret, body: '', headers: { ...made }, now }),
        ).resolves.toBeUndefined();
        await rejection(verifyRequestSignature({ secret, body: '{}', headers: { ...made }, now }));
      });
    });
  });
}
