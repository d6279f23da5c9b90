import { describe, expect, inject, it } from 'vitest';
import { bundleWorker } from '../support/package-consumer.ts';

// Workers that import the installed package, bundled by wrangler as a consumer's deploy
// would: the bundle builds, and importing one helper does not pull in the client
// (`"sideEffects": false` and the ESM build let the bundler drop the rest).
describe('package in a Worker bundle', () => {
  const consumer = inject('consumerDir');

  it('should bundle the walk for workerd', () => {
    const bundle = bundleWorker(consumer, 'worker.ts');
    expect(bundle.code).toContain('charge_success');
    expect(bundle.code).not.toMatch(/from\s*"node:/);
  });

  // The client's budget (bench/bundle-size.ts, 12 KiB) plus what a consumer's Worker adds:
  // wrangler's keep_names wrappers (about 1 KB) and the handler (bench/README.md).
  it('should bundle the whole client within 13.5 KiB gzipped', () => {
    const bundle = bundleWorker(consumer, 'size-client.ts');
    expect(bundle.code).toContain('/payments/initialize');
    expect(bundle.gzipped).toBeLessThanOrEqual(13.5 * 1024);
  });

  it('should leave the client out of a Worker that only verifies signatures', () => {
    const bundle = bundleWorker(consumer, 'size-verify.ts');
    expect(bundle.code).not.toContain('/payments/initialize');
    expect(bundle.gzipped).toBeLessThanOrEqual(1.5 * 1024);
  });

  it('should leave the client out of a Worker that only parses webhooks', () => {
    const bundle = bundleWorker(consumer, 'size-webhook.ts');
    expect(bundle.code).toContain('charge_success');
    expect(bundle.code).not.toContain('/payments/initialize');
    expect(bundle.gzipped).toBeLessThanOrEqual(5 * 1024);
  });
});
