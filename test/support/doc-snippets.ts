/**
 * The code blocks of README.md and docs/*.md, as the snippet test runs them. A block is
 * fenced (```lang, indented or not); the HTML comment lines right above its fence may hold
 * a marker:
 *
 * - `<!-- not-run: <reason> -->`: the block is not run, for the reason given (a Cloudflare
 *   account, a server that runs until Ctrl-C, a toolchain CI does not have, ...);
 * - `<!-- run: sandbox -->`: run beside `edgepay sandbox`, started from the installed
 *   package, with `127.0.0.1:8788` in the block pointing at it;
 * - `<!-- run: stack -->`: run beside `npm start`'s stack, with `127.0.0.1:8787`, `8788`
 *   and `8789` in the block pointing at the test's own ports.
 *
 * Blocks in the languages the test runs (ts, js, sh, py) without a marker run as they are.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The languages whose blocks run, by the info string's first word. */
const RUNNABLE = {
  ts: 'ts',
  typescript: 'ts',
  js: 'js',
  javascript: 'js',
  sh: 'sh',
  bash: 'sh',
  shell: 'sh',
  py: 'py',
  python: 'py',
} as const;

/** A runnable block's language. */
export type SnippetLanguage = (typeof RUNNABLE)[keyof typeof RUNNABLE];

/** What a block's marker asks for. */
type SnippetMarker =
  | { readonly kind: 'run'; readonly needs: 'none' | 'sandbox' | 'stack' }
  | { readonly kind: 'not-run'; readonly reason: string };

/** One fenced block. */
export interface Snippet {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** The 1-based line of the opening fence. */
  readonly line: number;
  /** The info string's first word, lower case (`ts`, `sh`, `json`, ...). */
  readonly info: string;
  /** The block's text, with the fence's indentation removed. */
  readonly code: string;
  readonly marker: SnippetMarker;
}

const FENCE = /^(\s*)```\s*([\w-]*)/;
const COMMENT = /^\s*<!--.*-->\s*$/;
const MARKER = /^\s*<!--\s*(not-run|run)\s*:?\s*(.*?)\s*-->\s*$/;

/**
 * Reads every fenced block of one Markdown text.
 *
 * @param file - the file's path, kept on each block for messages.
 * @param text - the Markdown.
 * @returns the blocks, in order.
 * @throws Error on a fence never closed, or a `run:` marker asking for something unknown.
 */
export function readSnippets(file: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (open === null) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j] ?? '')) {
      body.push((lines[j] ?? '').slice(Math.min(indent, leadingSpaces(lines[j] ?? ''))));
      j++;
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: a code block is never closed`);
    snippets.push({
      file,
      line: i + 1,
      info: (open[2] ?? '').toLowerCase(),
      code: `${body.join('\n')}\n`,
      marker: markerBefore(file, lines, i),
    });
    i = j;
  }
  return snippets;
}

/** Every block of README.md and docs/*.md (generated pages included), file by file. */
export function readDocSnippets(root: string): Snippet[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  return files.flatMap((file) => readSnippets(file, readFileSync(join(root, file), 'utf8')));
}

/** The language a block runs in, or `undefined` for blocks that only show text. */
export function languageOf(snippet: Snippet): SnippetLanguage | undefined {
  return Object.hasOwn(RUNNABLE, snippet.info)
    ? RUNNABLE[snippet.info as keyof typeof RUNNABLE]
    : undefined;
}

/** The marker among the HTML comment lines right above a fence (other comments may sit there too). */
function markerBefore(file: string, lines: readonly string[], fence: number): SnippetMarker {
  let match: RegExpExecArray | null = null;
  for (let i = fence - 1; i >= 0 && match === null && COMMENT.test(lines[i] ?? ''); i--) {
    match = MARKER.exec(lines[i] ?? '');
  }
  if (match === null) return { kind: 'run', needs: 'none' };
  const [, kind, rest = ''] = match;
  if (kind === 'not-run') return { kind: 'not-run', reason: rest };
  if (rest === 'sandbox' || rest === 'stack') return { kind: 'run', needs: rest };
  throw new Error(`${file}:${fence}: unknown run marker "${rest}" (sandbox or stack)`);
}

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}
