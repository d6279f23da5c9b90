/**
 * The gateway's OpenAPI document passes Redocly's linter (its recommended ruleset) with no
 * error and no warning, so generators and validators built on that ruleset take it as it is.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildGatewayDocument } from '../support/openapi-responses.ts';

const root = join(import.meta.dirname, '..', '..');
const folder = mkdtempSync(join(tmpdir(), 'edgepay-openapi-lint-'));

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

interface LintProblem {
  readonly ruleId: string;
  readonly severity: string;
  readonly message: string;
  readonly location: readonly { readonly pointer?: string }[];
}

/** Runs `redocly lint` on a document, offline, and returns its problems. */
function lint(doc: unknown, name: string): LintProblem[] {
  const file = join(folder, name);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const run = spawnSync(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['lint', file, '--format=json', '--extends=recommended'],
    {
      cwd: folder,
      encoding: 'utf8',
      timeout: 60_000,
      // No telemetry and no update check: nothing may leave the machine during tests.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const report = JSON.parse(run.stdout) as { problems: LintProblem[] };
  return report.problems;
}

const summary = (problems: readonly LintProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);

describe('the gateway OpenAPI document', () => {
  describe('redocly lint', () => {
    it('should report no error and no warning with the recommended ruleset', async () => {
      const doc = await buildGatewayDocument();
      expect(summary(lint(doc, 'openapi.json'))).toEqual([]);
    }, 60_000);

    it('should report a document without servers or license, so the check above can fail', async () => {
      const { servers: _servers, ...doc } = await buildGatewayDocument();
      const { license: _license, ...info } = doc.info as Record<string, unknown>;
      const rules = lint({ ...doc, info }, 'stripped.json').map((p) => p.ruleId);
      expect(rules).toEqual(expect.arrayContaining(['no-empty-servers', 'info-license']));
    }, 60_000);
  });

  describe('info', () => {
    it("should carry the package's license", async () => {
      const doc = await buildGatewayDocument();
      const pkg = (await import('../../package.json', { with: { type: 'json' } })).default;
      expect((doc.info as { license: unknown }).license).toEqual({
        name: pkg.license,
        identifier: pkg.license,
      });
    });
  });
});
