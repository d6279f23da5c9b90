/**
 * docs/gateway.md, "Receiving deliveries" shows the essential lines of the example
 * receivers (examples/receiver): each excerpt is what its file says, line for line in the
 * same order (elisions marked `// …` or `# …`), so the page cannot drift from the receivers
 * test/e2e/receivers.test.ts runs against `npm start`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const RECEIVERS = ['server.ts', 'receiver.py', 'main.go'];

/** The section's text, from its heading to the next `## `. */
function section(): string {
  const page = readFileSync(join(root, 'docs', 'gateway.md'), 'utf8');
  const start = page.indexOf('\n## Receiving deliveries\n');
  if (start < 0) throw new Error('docs/gateway.md has no "Receiving deliveries" section');
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/** The excerpts: each fenced block preceded by a marker naming its file. */
function excerpts(text: string): { file: string; lines: string[] }[] {
  const blocks = text.matchAll(
    /<!-- not-run: [^>]*?examples\/receiver\/([\w.]+)[^>]*-->\n```\w+\n([\s\S]*?)```/g,
  );
  return [...blocks].map(([, file = '', body = '']) => ({
    file,
    lines: body
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !/^(\/\/|#) …/.test(line)),
  }));
}

/** The excerpt lines not found in the file in order (the first one missing, and after). */
function missingLines(file: string, lines: readonly string[]): string[] {
  const source = readFileSync(join(root, 'examples', 'receiver', file), 'utf8')
    .split('\n')
    .map((line) => line.trim());
  let at = 0;
  for (const [index, line] of lines.entries()) {
    const found = source.indexOf(line, at);
    if (found < 0) return lines.slice(index);
    at = found + 1;
  }
  return [];
}

describe('docs/gateway.md, "Receiving deliveries"', () => {
  const text = section();

  it('should show an excerpt of each example receiver', () => {
    expect(excerpts(text).map(({ file }) => file)).toEqual(RECEIVERS);
  });

  it.each(excerpts(text))('should quote $file as it is', ({ file, lines }) => {
    expect(lines.length).toBeGreaterThan(5);
    expect(missingLines(file, lines)).toEqual([]);
  });

  it('should say why the Go receiver is not run', () => {
    expect(text).toMatch(/<!-- not-run: the Go toolchain is not installed in CI[^>]*main\.go/);
  });
});
