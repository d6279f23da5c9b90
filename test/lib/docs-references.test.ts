/**
 * Every reference a source comment makes to our own pages resolves: `docs/<page>.md` exists,
 * each quoted heading after it (`docs/payments-api.md, "Resources > Payment"`: a heading under
 * its parent heading) exists on that page, and each endpoint name after `docs/endpoints.md`
 * is a row there. Sections of a document outside the repository (`(spec: Events)`) are
 * refused: a reader of the repository cannot open them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const SCANNED = ['lib', 'worker', 'cli', 'scripts', 'console', 'test'];
const SELF = relative(root, import.meta.filename);

// Files that still name a section of the outside spec, each waiting on its owner; remove an
// entry once its file points at docs/payments-api.md. The test fails on an entry whose file
// no longer needs it, so the list only shrinks.
const SPEC_REFERENCES_ALLOWED = new Set<string>([]);

// `(spec: Events)`, `// spec: Payments`, `list filters, spec: ISO 8601`; not a parameter
// typed `spec: CallSpec`.
const SPEC_REFERENCE = /(?:^|[(,;*]|\/\/)[ \t]*spec:(?![ \t]*CallSpec\b)/m;
// `docs/page.md`, then optionally `, "Heading > Sub", "Other"` or `, \`endpoint.name\``.
const DOC_REFERENCE =
  /docs\/([\w-]+\.md)(?:,[ \t]*((?:"[^"\n]+"(?:,[ \t]*)?)+)|,[ \t]*`([\w.]+)`)?/g;

function sourceFiles(folder: string): string[] {
  const entries = readdirSync(join(root, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|tsx)$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((file) => !file.includes('node_modules') && file !== SELF)
    .sort();
}

// A comment wrapped over lines reads as one line: `,\n * "Heading"` becomes `, "Heading"`.
function unwrapComments(text: string): string {
  return text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/)[ \t]*/g, ' ');
}

// Each heading as the path of its texts from the top (`["Payments API", "Resources",
// "Payment"]`); a trailing parenthesis in a heading (`Authentication (note)`) is ignored.
function headingPaths(markdown: string): string[][] {
  const paths: string[][] = [];
  const stack: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) inFence = !inFence;
    const heading = inFence ? null : /^(#{1,6})\s+(.+?)\s*$/.exec(line);
    if (heading === null) continue;
    const [, hashes = '#', text = ''] = heading;
    stack.length = hashes.length - 1;
    stack[hashes.length - 1] = text.replace(/\s*\([^)]*\)$/, '');
    paths.push(stack.filter((text) => text !== undefined));
  }
  return paths;
}

function hasHeading(paths: string[][], reference: string): boolean {
  const wanted = reference.split('>').map((part) => part.trim());
  return paths.some(
    (path) =>
      path.length >= wanted.length &&
      wanted.every((part, i) => path[path.length - wanted.length + i] === part),
  );
}

function pageOf(page: string): string | undefined {
  try {
    return readFileSync(join(root, 'docs', page), 'utf8');
  } catch {
    return undefined;
  }
}

function brokenReferences(file: string, text: string): string[] {
  const broken: string[] = [];
  for (const match of unwrapComments(text).matchAll(DOC_REFERENCE)) {
    const [reference, page = '', headings, endpoint] = match;
    const markdown = pageOf(page);
    if (markdown === undefined) {
      broken.push(`${file}: ${reference} (no such page)`);
      continue;
    }
    const paths = headingPaths(markdown);
    for (const heading of headings?.match(/"[^"]+"/g) ?? []) {
      if (!hasHeading(paths, heading.slice(1, -1)))
        broken.push(`${file}: docs/${page} has no heading ${heading}`);
    }
    if (endpoint !== undefined && !markdown.includes(`\`${endpoint}\``))
      broken.push(`${file}: docs/${page} has no \`${endpoint}\``);
  }
  return broken;
}

const files = SCANNED.flatMap(sourceFiles);

describe('references from source comments to docs/', () => {
  it('scans the source folders', () => {
    expect(files).toContain('lib/endpoints.ts');
    expect(files).toContain('worker/index.ts');
  });

  it('every docs/<page>.md reference names an existing page, heading and endpoint', () => {
    const broken = files.flatMap((file) =>
      brokenReferences(file, readFileSync(join(root, file), 'utf8')),
    );
    expect(broken).toEqual([]);
  });

  it('no comment names a section of a document outside the repository', () => {
    const offending = files.filter(
      (file) =>
        !SPEC_REFERENCES_ALLOWED.has(file) &&
        SPEC_REFERENCE.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(offending).toEqual([]);
  });

  it('every allowed file still needs its entry', () => {
    const stale = [...SPEC_REFERENCES_ALLOWED].filter(
      (file) => !SPEC_REFERENCE.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(stale).toEqual([]);
  });
});

describe('the reference checks themselves', () => {
  const page = ['# Page', '## Resources', '### Payment', '## States', '### Payment'].join('\n');

  it('matches a heading under its parent, and a bare heading anywhere', () => {
    const paths = headingPaths(page);
    expect(hasHeading(paths, 'Resources > Payment')).toBe(true);
    expect(hasHeading(paths, 'Payment')).toBe(true);
    expect(hasHeading(paths, 'Resources > Refund')).toBe(false);
    expect(hasHeading(paths, 'Endpoints > Payment')).toBe(false);
  });

  it('reads every heading of a reference wrapped over comment lines', () => {
    const text = '// (docs/payments-api.md, "Resources > Payment",\n// "Resources > Nothing")';
    expect(brokenReferences('x.ts', text)).toEqual([
      'x.ts: docs/payments-api.md has no heading "Resources > Nothing"',
    ]);
  });

  it('flags a missing page and a missing endpoint row', () => {
    expect(brokenReferences('x.ts', '(docs/nothing.md)')).toEqual([
      'x.ts: docs/nothing.md (no such page)',
    ]);
    expect(brokenReferences('x.ts', '(docs/endpoints.md, `payments.nothing`)')).toEqual([
      'x.ts: docs/endpoints.md has no `payments.nothing`',
    ]);
  });

  it('tells a spec section from a parameter typed CallSpec', () => {
    expect(SPEC_REFERENCE.test('/** A payment (spec: Resources > Payment). */')).toBe(true);
    expect(SPEC_REFERENCE.test('// spec: Payments')).toBe(true);
    expect(SPEC_REFERENCE.test('  send(spec: CallSpec): void {')).toBe(false);
  });
});
