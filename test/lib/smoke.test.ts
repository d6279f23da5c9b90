import { describe, expect, it } from 'vitest';
import { signRequest } from '../../lib/signing.ts';

describe('smoke', () => {
  it('should sign', async () => {
    const h = await signRequest({ keyId: 'k', secret: 's', timestamp: 1 });
    expect(h['X-Signature']).toHaveLength(64);
  });
});
