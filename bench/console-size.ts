// The operator console's size against its budget (everything served under /console/,
// gzip -9, at most 60 KiB): builds it as `npm run build:console` does, into a temporary
// folder, and prints each file. Exits 1 over budget. Run: npm run bench -- console
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConsole, type ConsoleBuild } from '../scripts/build-console.ts';

/** The most the console may weigh, gzip -9 bytes of every file served under /console/ added up. */
export const CONSOLE_BUDGET = 60 * 1024;

/**
 * Builds the console into a temporary folder (so a running `wrangler dev` is left alone)
 * and measures it.
 *
 * @returns each file with its raw and gzip -9 size in bytes, and the totals.
 */
export async function measureConsole(): Promise<ConsoleBuild> {
  const outDir = mkdtempSync(join(tmpdir(), 'edgepay-console-'));
  try {
    return await buildConsole(outDir);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await measureConsole();
  console.log('| file | raw B | gzip -9 B |');
  console.log('|---|---|---|');
  for (const file of built.files) console.log(`| ${file.path} | ${file.raw} | ${file.gzipped} |`);
  console.log(
    `| **total** (budget ${CONSOLE_BUDGET} B gzipped) | ${built.raw} | ${built.gzipped} |`,
  );
  if (built.gzipped > CONSOLE_BUDGET) {
    console.error('\nover budget');
    process.exit(1);
  }
}
