/**
 * Nothing the repository tells a reader (or a test) to run may fetch a package named
 * `edgepay` from a registry and run it: the name is not ours on any registry until the
 * first release, so a runner that installs what it does not find (`npx` without
 * `--no-install`, `bunx`, `pnpm dlx`, Deno's `npm:` specifiers) would run a stranger's
 * package. The sandbox command is started as the installed bin or from source.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const SELF = 'test/scripts/registry-commands.test.ts';
/** Where commands for readers and tests live; lib/ and cli/ docstrings count as docs. */
const SCANNED = ['README.md', 'CHANGELOG.md', 'docs', 'test', 'examples', 'scripts', 'bench'];
const SCANNED_TOO = ['lib', 'cli', 'worker', 'console/src', 'package.json'];
const TEXT = /\.(md|ts|tsx|js|mjs|cjs|json|jsonc|sh|py|go|php|toml|ya?ml|txt|html)$/;

/**
 * The commands in `text` that would download `edgepay` from a registry where it is not
 * installed, one line each. Quotes, brackets and commas are read as spaces, so an argument
 * list (`["npx", "--yes", "edgepay"]`) counts like the command line it builds.
 */
function registryRuns(text: string): string[] {
  const found: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[`'"[\](),]/g, ' ').replace(/\s+/g, ' ');
    const options = '((?: -{1,2}[\\w-]+(?:=\\S+)?)*)';
    const runner = new RegExp(
      `\\b(npx|pnpx|bunx|bun x|npm exec|pnpm dlx|yarn dlx|pnpm exec)${options}(?: --)? (?:(?:-p|--package)[ =])?edgepay\\b`,
      'g',
    );
    for (const match of line.matchAll(runner)) {
      const [, command = '', flags = ''] = match;
      const refuses = /(^| )--no(-install)?( |$)/.test(flags.trim().replace(/=\S+/g, ''));
      // npx and npm exec run an installed copy and refuse to install with --no-install
      // (--no); the others install whatever they do not find.
      if ((command === 'npx' || command === 'npm exec') && refuses) continue;
      if (command === 'pnpm exec') continue; // runs local bins only
      found.push(raw.trim());
    }
    if (/\b(deno (run|x|install)|dx)\b.*\bnpm:edgepay\b/.test(line)) found.push(raw.trim());
  }
  return found;
}

function scannedFiles(): string[] {
  const listed = spawnSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...SCANNED, ...SCANNED_TOO],
    { cwd: root, encoding: 'utf8' },
  );
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\n')
    .filter((file) => TEXT.test(file) && file !== SELF && !file.startsWith('test/fixtures/'));
}

describe('commands that could fetch edgepay from a registry', () => {
  it('should find the unsafe forms and let the installed and source forms pass', () => {
    expect(registryRuns('npx --yes edgepay sandbox --port 0')).toHaveLength(1);
    expect(registryRuns('npx -y edgepay sandbox')).toHaveLength(1);
    expect(registryRuns('run `npx edgepay sandbox` first')).toHaveLength(1);
    expect(registryRuns('["npx", "--yes", "edgepay", "sandbox", "--port", "0"],')).toHaveLength(1);
    expect(registryRuns("['setsid', 'npx', '--yes', 'edgepay', 'sandbox']")).toHaveLength(1);
    expect(registryRuns('exec.Command("npx", "--yes", "edgepay", "sandbox")')).toHaveLength(1);
    expect(registryRuns('bunx edgepay sandbox')).toHaveLength(1);
    expect(registryRuns('npm exec -- edgepay sandbox')).toHaveLength(1);
    expect(registryRuns('npx --package=edgepay edgepay sandbox')).toHaveLength(1);
    expect(registryRuns('pnpm dlx edgepay sandbox')).toHaveLength(1);
    expect(registryRuns('deno run -A npm:edgepay sandbox')).toHaveLength(1);

    expect(registryRuns('npx --no-install edgepay sandbox --port 0')).toEqual([]);
    expect(registryRuns("['npx', '--no-install', 'edgepay', 'sandbox']")).toEqual([]);
    expect(registryRuns('npm exec --no -- edgepay sandbox')).toEqual([]);
    expect(registryRuns('node_modules/.bin/edgepay sandbox --port 0')).toEqual([]);
    expect(registryRuns('node cli/edgepay.ts sandbox')).toEqual([]);
    expect(registryRuns('npx wrangler deploy; npm install edgepay')).toEqual([]);
    expect(registryRuns('import { PaymentsClient } from "npm:edgepay";')).toEqual([]);
  });

  it('should appear nowhere in the docs, tests, examples, scripts or sources', () => {
    const files = scannedFiles();
    expect(files).toContain('docs/sandbox.md');
    expect(files).toContain('README.md');
    const offenders = files.flatMap((file) =>
      registryRuns(readFileSync(join(root, file), 'utf8')).map((line) => `${file}: ${line}`),
    );
    expect(offenders).toEqual([]);
  });

  it("should start the installed bin in docs/sandbox.md's Python, Go and PHP fixtures", () => {
    const page = readFileSync(join(root, 'docs', 'sandbox.md'), 'utf8');
    for (const language of ['python', 'go', 'php']) {
      const blocks = [...page.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))];
      expect(blocks, language).toHaveLength(1);
      const body = blocks[0]?.[1] ?? '';
      expect(body.replace(/["',\s]+/g, '/'), language).toMatch(/node_modules\/\.bin\/edgepay\b/);
      expect(body, language).not.toMatch(/\bnpx\b/);
    }
  });
});
