/**
 * wrangler.toml is safe to deploy as it is, `[env.production]` says the same as its top
 * level apart from resource ids, `.dev.vars.example` is what switches `npm start` to local
 * mode, and `npm run deploy:check` (scripts/deploy-check.ts) refuses an unsafe
 * configuration, naming the setting.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { parseSettings, type SettingName } from '../../worker/config.ts';

const root = join(import.meta.dirname, '..', '..');
const CONFIG = join(root, 'wrangler.toml');
const scratch = mkdtempSync(join(tmpdir(), 'edgepay-wrangler-config-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function readConfig(env?: string): ReturnType<typeof unstable_readConfig> {
  return unstable_readConfig({ config: CONFIG, ...(env === undefined ? {} : { env }) }, {});
}

/** Resource bindings with their ids taken out: what must match between environments. */
function bindingsWithoutIds(config: ReturnType<typeof unstable_readConfig>): unknown {
  return {
    d1: config.d1_databases.map((database: object) => ({ ...database, database_id: undefined })),
    kv: config.kv_namespaces.map((namespace: object) => ({ ...namespace, id: undefined })),
    queues: JSON.parse(JSON.stringify(config.queues)),
    durableObjects: JSON.parse(JSON.stringify(config.durable_objects)),
    triggers: JSON.parse(JSON.stringify(config.triggers)),
    observability: JSON.parse(JSON.stringify(config.observability ?? null)),
  };
}

function deployCheck(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'deploy-check.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

/** A copy of wrangler.toml with `edit` applied, its paths made absolute. */
function editedConfig(edit: (toml: string) => string): string {
  const toml = readFileSync(CONFIG, 'utf8')
    .replace('main = "worker/index.ts"', `main = "${join(root, 'worker', 'index.ts')}"`)
    .replaceAll('migrations_dir = "migrations"', `migrations_dir = "${join(root, 'migrations')}"`)
    .replace('directory = "./console/dist"', `directory = "${join(root, 'console', 'dist')}"`);
  const file = join(scratch, `wrangler-${crypto.randomUUID()}.toml`);
  writeFileSync(file, edit(toml));
  return file;
}

describe('wrangler.toml', () => {
  it('should give [env.production] the same Worker, settings, bindings and logs as the top level', () => {
    const top = readConfig();
    const production = readConfig('production');
    expect(production.name).toBe(top.name);
    expect(production.vars).toEqual(top.vars);
    expect(bindingsWithoutIds(production)).toEqual(bindingsWithoutIds(top));
  });

  it('should keep local mode, loopback addresses and the development switches out', () => {
    for (const config of [readConfig(), readConfig('production')]) {
      const vars = config.vars as Record<string, string>;
      expect(vars.GATEWAY_MODE).toBe('production');
      expect(vars.UPSTREAM_BASE_URL).toMatch(/^https:\/\//);
      expect(Number(vars.RATE_LIMIT_PER_MINUTE)).toBeGreaterThan(0);
      expect(vars).not.toHaveProperty('ALLOW_LOCAL_SUBSCRIBERS');
      expect(vars).not.toHaveProperty('ALLOW_UNSIGNED_WEBHOOKS');
    }
  });

  it('should be switched to valid local settings by .dev.vars.example', () => {
    const example = parseEnv(readFileSync(join(root, '.dev.vars.example'), 'utf8'));
    const loaded = parseSettings({ ...readConfig().vars, ...example } as Partial<
      Record<SettingName, string>
    >);
    expect(loaded).toMatchObject({
      ok: true,
      settings: { mode: 'local', rateLimitPerMinute: 0, subscribers: { allowLocal: true } },
    });
  });
});

// Each case runs wrangler's dry-run build in a child process: seconds on an idle machine,
// longer on a loaded 2-core one, so the cases get more than vitest's default 5 s.
describe('npm run deploy:check', { timeout: 120_000 }, () => {
  it('should pass on the committed configuration, printing the bundle size', () => {
    const { status, output } = deployCheck();
    expect(status, output).toBe(0);
    expect(output).toMatch(/ok {3}\[env\.production\]: settings valid for production/);
    expect(output).toMatch(/ok {3}bundle index\.js: [\d.]+ KiB raw, [\d.]+ KiB gzip/);
    expect(output).toContain(
      'ok   observability: Workers Logs on in [env.production], every request',
    );
    expect(output).toContain('deploy:check passed');
  });

  it('should fail on an http upstream in [env.production], naming the setting', () => {
    const config = editedConfig((toml) =>
      toml.replace(
        /(\[env\.production\.vars\][\s\S]*?)UPSTREAM_BASE_URL = "[^"]*"/,
        '$1UPSTREAM_BASE_URL = "http://api.payments.example"',
      ),
    );
    const { status, output } = deployCheck('--config', config);
    expect(status, output).toBe(1);
    expect(output).toContain(
      'FAIL [env.production]: UPSTREAM_BASE_URL must be an https URL outside local mode',
    );
  });

  it('should fail on local mode or a development switch at the top level', () => {
    const config = editedConfig((toml) =>
      toml.replace(
        'GATEWAY_MODE = "production"\n# The payment service',
        'GATEWAY_MODE = "production"\nALLOW_LOCAL_SUBSCRIBERS = "true"\n# The payment service',
      ),
    );
    const { status, output } = deployCheck('--config', config);
    expect(status, output).toBe(1);
    expect(output).toContain(
      'FAIL top level: ALLOW_LOCAL_SUBSCRIBERS is a development switch, refused outside local mode',
    );
  });

  it('should check the secrets given, never printing them', () => {
    const secrets = join(scratch, 'production.secrets');
    writeFileSync(
      secrets,
      [
        'UPSTREAM_KEY_ID=live-key',
        'UPSTREAM_SECRET=live-secret-value',
        'GATEWAY_CALLERS=[{"name":"checkout","token":"short-caller-token"}]',
        'ADMIN_TOKEN=short-admin-token',
      ].join('\n'),
    );
    const { status, output } = deployCheck('--secrets', secrets);
    expect(status, output).toBe(1);
    expect(output).toContain('GATEWAY_CALLERS every token must be at least 32 characters');
    expect(output).toContain('ADMIN_TOKEN must be at least 32 characters');
    expect(output).toContain('WEBHOOK_SECRET must be set outside local mode');
    for (const value of ['live-secret-value', 'short-caller-token', 'short-admin-token']) {
      expect(output).not.toContain(value);
    }
  });

  it('should warn when Workers Logs is off in [env.production], and fail with --strict', () => {
    const config = editedConfig((toml) =>
      toml.replace(
        '[env.production.observability]\nenabled = true',
        '[env.production.observability]\nenabled = false',
      ),
    );
    const relaxed = deployCheck('--config', config);
    expect(relaxed.status, relaxed.output).toBe(0);
    expect(relaxed.output).toContain('warn observability: Workers Logs off in [env.production]');
    const strict = deployCheck('--config', config, '--strict');
    expect(strict.status, strict.output).toBe(1);
    expect(strict.output).toContain('FAIL observability: Workers Logs off in [env.production]');
  });

  it('should fail on the placeholders with --strict', () => {
    const { status, output } = deployCheck('--strict');
    expect(status, output).toBe(1);
    expect(output).toContain('FAIL d1_databases DB: database_id is the placeholder');
    expect(output).toContain('FAIL kv_namespaces CACHE: id is the placeholder');
    expect(output).toContain('FAIL UPSTREAM_BASE_URL is the placeholder');
  });
});
