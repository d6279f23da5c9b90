import { describe, expect, it } from 'vitest';
import { inProcessTarget, smokeWalk } from '../shared/smoke-walk.ts';

describe('SDK runtimes', () => {
  it('should walk inside workerd', async () => {
    expect(navigator.userAgent).toBe('Cloudflare-Workers');
    expect(await smokeWalk(inProcessTarget())).toEqual([
      'payment',
      'transfer',
      'refund',
      'mandate',
    ]);
  });
});
