// Builds the operator console (console/) into console/dist, the gateway's static assets
// (`[assets]` in wrangler.toml): console/dist/console/ holds the page served at /console/
// and its hashed script and style sheet, console/dist/_headers its security headers.
// Run: `npm run build:console`. wrangler's `[build] command` runs it before `wrangler dev`,
// `npm start` and `wrangler deploy`, so the built files are never committed.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { consoleHeadersFile } from '../worker/http/console-headers.ts';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const source = join(root, 'console');

/** Where the assets go by default, from the repository root (wrangler.toml `[assets] directory`). */
export const CONSOLE_DIST = 'console/dist';
/** The console's path on the gateway: its files live in this folder of the assets. */
const BASE = 'console';

/** One built file: its path under the assets folder and its sizes in bytes. */
export interface ConsoleFile {
  readonly path: string;
  readonly raw: number;
  /** gzip -9, as {@link ConsoleBuild.gzipped} adds them up. */
  readonly gzipped: number;
}

/** What a build wrote: each file served under /console/ and the totals in bytes. */
export interface ConsoleBuild {
  readonly files: readonly ConsoleFile[];
  readonly raw: number;
  readonly gzipped: number;
}

/**
 * Builds the console: esbuild bundles and minifies console/src/main.ts (Preact, htm,
 * uPlot) and console/src/console.css (uPlot's style sheet imported) under content-hashed
 * names into `<outDir>/console/assets/`, writes `<outDir>/console/index.html` from
 * console/static/index.html naming them, and `<outDir>/_headers` with the console's security
 * headers (worker/http/console-headers.ts, which the gateway also puts on its own answers
 * under /console/).
 *
 * Each file is written to a temporary name and renamed, and files of earlier builds are
 * removed only after, so a `wrangler dev` serving the folder (two e2e stacks may build
 * into it at once) never sees it empty or a file half written.
 *
 * @param outDir - the assets folder, absolute or from the repository root.
 *   @default {@link CONSOLE_DIST}
 * @returns the files served under /console/ with their raw and gzip -9 sizes (the
 *   `_headers` file is read by the platform, never served).
 * @throws whatever esbuild throws on a source error.
 *
 * @example
 * ```ts
 * const { gzipped } = await buildConsole('/tmp/console-check');
 * ```
 */
export async function buildConsole(outDir: string = CONSOLE_DIST): Promise<ConsoleBuild> {
  const out = isAbsolute(outDir) ? outDir : join(root, outDir);
  const assets = join(out, BASE, 'assets');
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: join(source, 'src', 'main.ts'), style: join(source, 'src', 'console.css') },
    outdir: assets,
    entryNames: '[name]-[hash]',
    // uPlot is imported when the chart is first drawn: a chunk of its own.
    chunkNames: 'chunk-[hash]',
    splitting: true,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    // No source maps: the console is small, and a map would double what is downloaded.
    sourcemap: false,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  const script = result.outputFiles.find((file) => basename(file.path).startsWith('app-'));
  const style = result.outputFiles.find((file) => file.path.endsWith('.css'));
  if (script === undefined || style === undefined) {
    throw new Error('the console build produced no script or no style sheet');
  }
  const page = readFileSync(join(source, 'static', 'index.html'), 'utf8')
    .replace('{{script}}', `assets/${basename(script.path)}`)
    .replace('{{style}}', `assets/${basename(style.path)}`);
  const written = [
    ...result.outputFiles.map((file) => writeAtomically(file.path, file.contents)),
    writeAtomically(join(out, BASE, 'index.html'), page),
    writeAtomically(join(out, '_headers'), consoleHeadersFile()),
  ];
  for (const entry of readdirSync(assets)) {
    // A `.tmp` file is another build's, about to be renamed.
    const stale = !written.includes(join(assets, entry)) && !entry.endsWith('.tmp');
    if (stale) rmSync(join(assets, entry), { force: true });
  }
  return measureFiles(join(out, BASE), out);
}

function writeAtomically(path: string, contents: string | Uint8Array): string {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
  return path;
}

// Every file under `folder`, with paths from `base`.
function measureFiles(folder: string, base: string): ConsoleBuild {
  const files = readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      const bytes = readFileSync(path);
      return {
        path: relative(base, path),
        raw: bytes.length,
        gzipped: gzipSync(bytes, { level: 9 }).length,
      };
    })
    .sort((a, b) => a.path.localeCompare(b.path));
  const sum = (key: 'raw' | 'gzipped') => files.reduce((total, file) => total + file[key], 0);
  return { files, raw: sum('raw'), gzipped: sum('gzipped') };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildConsole();
  console.log(
    `build:console: ${CONSOLE_DIST}/${BASE}/ ${built.files.length} files, ` +
      `${built.raw} B, ${built.gzipped} B gzipped`,
  );
}
