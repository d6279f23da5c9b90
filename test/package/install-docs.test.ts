import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type RunningCli, startCommand } from '../support/cli-process.ts';
import { ROOT, run } from '../support/package-consumer.ts';

// The install paths README's "Install" and docs/sandbox.md document before the package is
// on a registry, followed as written in a fresh project that installed `npm pack`'s tarball.
// README with its line breaks read as spaces, as a reader reads its sentences.
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
const sandboxPage = readFileSync(join(ROOT, 'docs', 'sandbox.md'), 'utf8');

/** The one fenced block of `language` in docs/sandbox.md. */
function sandboxBlock(language: string): string {
  const blocks = [
    ...sandboxPage.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g')),
  ];
  if (blocks.length !== 1)
    throw new Error(`docs/sandbox.md has ${blocks.length} ${language} blocks`);
  return blocks[0]?.[1] ?? '';
}

/** The Python interpreter itself (not a version manager's shim), when it has pytest. */
const python = (() => {
  const probe = spawnSync('python3', ['-c', 'import sys, pytest; print(sys.executable)'], {
    encoding: 'utf8',
  });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
})();

describe('installing before the package is on a registry', () => {
  const tarball = inject('tarball');
  const consumer = inject('consumerDir');
  const running: RunningCli[] = [];
  afterEach(async () => {
    for (const cli of running.splice(0)) await cli.stop('SIGTERM');
  });

  it("should name the tarball npm pack writes in README's install commands", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const name = basename(tarball.path);
    expect(name).toBe(`edgepay-${manifest.version}.tgz`);
    expect(readme).toContain(`npm ci && npm pack # builds dist/, writes ${name}`);
    expect(readme).toContain(`npm install ../edgepay/${name}`);
    // README says a git install would lack dist/: true only while npm has no `prepare`
    // to build it with (npm runs prepare, not prepack, for git dependencies).
    expect(readme).toContain('npm builds a git dependency only through a `prepare` script');
    expect(manifest.scripts.prepare).toBeUndefined();
  });

  it.skipIf(python === undefined)(
    "should run docs/sandbox.md's pytest fixture against the installed command",
    async () => {
      writeFileSync(join(consumer, 'conftest.py'), sandboxBlock('python'));
      writeFileSync(
        join(consumer, 'test_sandbox_fixture.py'),
        [
          'import json, os, urllib.request',
          '',
          'def test_banks(sandbox_url):',
          '    assert os.environ["PAYMENTS_BASE_URL"] == sandbox_url',
          '    with urllib.request.urlopen(sandbox_url + "/banks") as answer:',
          '        assert answer.status == 200',
          '        assert len(json.load(answer)["data"]) > 0',
          '    print("SANDBOX_URL=" + sandbox_url)',
          '',
        ].join('\n'),
      );
      // Only Node on PATH, no npm or npx: the fixture needs nothing that could reach a
      // registry.
      const result = run(
        python ?? 'python3',
        ['-m', 'pytest', '-s', '-p', 'no:cacheprovider', 'test_sandbox_fixture.py'],
        consumer,
        { PATH: dirname(process.execPath) },
      );
      expect(result.stdout).toMatch(/1 passed/);
      expect(result.status).toBe(0);
      const url = /SANDBOX_URL=(http:\/\/127\.0\.0\.1:\d+)/.exec(result.stdout)?.[1];
      expect(url).toBeDefined();
      // The fixture's teardown stopped it: nothing listens there once pytest is done.
      await expect(fetch(`${url}/banks`)).rejects.toThrow();
    },
  );

  it.each([
    ['Bun', 'bun node_modules/.bin/edgepay sandbox', 'bun', ['node_modules/.bin/edgepay']],
    [
      'Deno',
      'deno run -A --node-modules-dir=manual node_modules/edgepay/dist/cli/edgepay.js sandbox',
      'deno',
      ['run', '-A', '--node-modules-dir=manual', 'node_modules/edgepay/dist/cli/edgepay.js'],
    ],
  ])(
    'should start the installed command under %s as README says',
    async (_, documented, command, argv) => {
      expect(readme).toContain(documented);
      // A process group: node_modules/.bin/deno is a Node wrapper around the binary, and the
      // group is signalled whole.
      const cli = await startCommand(command, [...argv, 'sandbox', '--port', '0'], consumer, {
        group: true,
      });
      running.push(cli);
      const banks = await fetch(`${cli.url}/banks`);
      expect(banks.status).toBe(200);
    },
  );
});
