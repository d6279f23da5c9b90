// The package as consumers get it: the tarball `npm pack` makes (file count, sizes), and
// Workers importing the installed package, bundled by wrangler --minify, gzip -9 beside
// the budgets of bench/bundle-size.ts (which bundles the sources with esbuild).
// Run: npm run bench -- package
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorker, createConsumer, packPackage } from '../test/support/package-consumer.ts';
import { BUDGETS } from './bundle-size.ts';

/** The consumer Workers measured (test/package/fixtures), and the budget each compares to. */
export const PACKAGE_BUNDLES = [
  { entry: 'size-client.ts', what: 'Worker using PaymentsClient', budget: BUDGETS[0].limit },
  {
    entry: 'size-verify.ts',
    what: 'Worker using verifyRequestSignature only',
    budget: BUDGETS[1].limit,
  },
  { entry: 'size-webhook.ts', what: 'Worker using parseWebhookEvent only', budget: undefined },
] as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = mkdtempSync(join(tmpdir(), 'edgepay-package-bench-'));
  try {
    const tarball = packPackage(dir);
    console.log(
      `tarball: ${tarball.entryCount} files, ${tarball.unpackedSize} B unpacked, ${tarball.size} B packed\n`,
    );
    const consumer = createConsumer(join(dir, 'consumer'), tarball.path);
    console.log('| consumer Worker | keep_names | minified B | gzip -9 B | budget B |');
    console.log('|---|---|---|---|---|');
    for (const { entry, what, budget } of PACKAGE_BUNDLES) {
      for (const keepNames of [true, false]) {
        const size = bundleWorker(consumer, entry, keepNames);
        console.log(
          `| ${what} | ${keepNames} | ${size.minified} | ${size.gzipped} | ${budget ?? '-'} |`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
