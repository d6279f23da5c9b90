/**
 * Every ts, js, sh and py block of README.md and docs/*.md runs as a reader would run it:
 * saved into a fresh `npm init -y` project that installed the packed tarball, then run
 * with Node 22 (`.mts` and `.mjs`, so top-level await works in a CommonJS project), bash
 * or python3; a shell block stops at its first failing command, an HTTP error from curl
 * included. Blocks that need the sandbox or `npm start`'s stack say so in a marker and
 * get one on the test's own ports; blocks that cannot run say why in a marker this test
 * reads (test/support/doc-snippets.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  languageOf,
  readDocSnippets,
  readSnippets,
  type Snippet,
  type SnippetLanguage,
} from '../support/doc-snippets.ts';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';
import { createScratchProject, ROOT, run } from '../support/package-consumer.ts';

/** The ports of the stack the `run: stack` blocks get, in place of 8787, 8788 and 8789. */
const STACK = { gateway: 18887, sandbox: 18888, receiver: 18889 };

const snippets = readDocSnippets(ROOT);
const runnable = snippets.filter((snippet) => languageOf(snippet) !== undefined);
const label = (snippet: Snippet) => `${snippet.file}:${snippet.line} (${snippet.info})`;

let scratch = '';
let sandbox: { url: string; process: ChildProcess } | undefined;
let stack: NpmStartStack | undefined;

beforeAll(async () => {
  scratch = createScratchProject(
    mkdtempSync(join(tmpdir(), 'edgepay-snippets-')),
    inject('tarball').path,
  );
  if (runnable.some(needs('sandbox'))) sandbox = await startSandbox(scratch);
  if (runnable.some(needs('stack'))) stack = await startNpmStart(STACK);
}, 180_000);

afterAll(async () => {
  sandbox?.process.kill('SIGTERM');
  await stack?.stop();
  if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
});

describe('documentation snippets', () => {
  it('should find the blocks of README.md and docs/, and a reason for each one not run', () => {
    expect(runnable.length).toBeGreaterThan(10);
    const unexplained = runnable
      .filter((snippet) => snippet.marker.kind === 'not-run' && snippet.marker.reason === '')
      .map(label);
    expect(unexplained).toEqual([]);
  });

  it('should read markers, indented fences and languages as documented', () => {
    const text = [
      '```ts',
      'one();',
      '```',
      '<!-- not-run: needs an account -->',
      '```sh',
      'wrangler deploy',
      '```',
      '- a list item:',
      '  <!-- run: sandbox -->',
      '  ```python',
      '  print(1)',
      '  ```',
      '```json',
      '{}',
      '```',
    ].join('\n');
    const read = readSnippets('x.md', text);
    expect(read.map((snippet) => [snippet.line, languageOf(snippet), snippet.marker])).toEqual([
      [1, 'ts', { kind: 'run', needs: 'none' }],
      [5, 'sh', { kind: 'not-run', reason: 'needs an account' }],
      [10, 'py', { kind: 'run', needs: 'sandbox' }],
      [13, undefined, { kind: 'run', needs: 'none' }],
    ]);
    expect(read[2]?.code).toBe('print(1)\n');
    expect(() => readSnippets('x.md', '<!-- run: moon -->\n```ts\n```')).toThrow(
      'unknown run marker',
    );
    expect(() => readSnippets('x.md', '```ts\nnever closed')).toThrow('never closed');
  });

  const toRun = runnable.filter((snippet) => snippet.marker.kind === 'run');
  it.each(toRun.map((snippet) => [label(snippet), snippet] as const))(
    'should run %s',
    (_, snippet) => {
      const language = languageOf(snippet) as SnippetLanguage;
      const result = runSnippet(snippet, language);
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.status, output).toBe(0);
      if (language !== 'sh') {
        // A program block prints what it shows: running it tells the reader something.
        expect(result.stdout.trim(), output).not.toBe('');
      }
    },
    120_000,
  );
});

function needs(what: 'sandbox' | 'stack'): (snippet: Snippet) => boolean {
  return (snippet) => snippet.marker.kind === 'run' && snippet.marker.needs === what;
}

const EXTENSIONS: Record<SnippetLanguage, string> = { ts: 'mts', js: 'mjs', sh: 'sh', py: 'py' };
const INTERPRETERS: Record<SnippetLanguage, string> = {
  ts: 'node',
  js: 'node',
  sh: 'bash',
  py: 'python3',
};

/**
 * What a shell block runs under: stop at the first failing command, and an HTTP error from
 * curl is a failure (with its body printed), not a silent exit 0.
 */
const SHELL_PRELUDE = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n';

/** Writes the block into the scratch project, its addresses pointed at the test's servers, and runs it. */
function runSnippet(snippet: Snippet, language: SnippetLanguage) {
  let code = snippet.code;
  if (snippet.marker.kind === 'run' && snippet.marker.needs === 'sandbox' && sandbox) {
    code = code.replaceAll('http://127.0.0.1:8788', sandbox.url);
  }
  if (snippet.marker.kind === 'run' && snippet.marker.needs === 'stack') {
    for (const [from, to] of [
      [8787, STACK.gateway],
      [8788, STACK.sandbox],
      [8789, STACK.receiver],
    ]) {
      code = code.replaceAll(`127.0.0.1:${from}`, `127.0.0.1:${to}`);
    }
  }
  const file = `snippet-${snippet.file.replaceAll(/\W/g, '-')}-${snippet.line}.${EXTENSIONS[language]}`;
  writeFileSync(join(scratch, file), language === 'sh' ? `${SHELL_PRELUDE}${code}` : code);
  // The project's own binaries first (`edgepay`), then Node 22.
  const path = [join(scratch, 'node_modules', '.bin'), dirname(process.execPath), process.env.PATH];
  return run(INTERPRETERS[language], [file], scratch, { PATH: path.join(':') }, 90_000);
}

/** Starts the installed `edgepay sandbox` on a free port; resolves with its address. */
function startSandbox(dir: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(join(dir, 'node_modules', '.bin', 'edgepay'), ['sandbox', '--port', '0'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${output}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const address = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (address?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ url: address[1], process: child });
      }
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}:\n${output}`)));
  });
}
