/**
 * The SDK's bundle budgets, checked here so a size regression fails `npm test`: the
 * whole client <= 12 KiB and `verifyRequestSignature` alone <= 1 KiB, esbuild --bundle
 * --minify --format=esm --conditions=workerd,worker then gzip -9, as
 * `node bench/bundle-size.ts` prints them.
 */
import { describe, expect, it } from 'vitest';
import { BUDGETS, measure } from '../../bench/bundle-size.ts';

describe('bundle size', () => {
  it.each(BUDGETS)('should keep $name within $limit bytes gzipped', async ({ source, limit }) => {
    const size = await measure(source);
    expect(size.gzipped).toBeGreaterThan(0);
    expect(size.gzipped).toBeLessThanOrEqual(limit);
  });
});
