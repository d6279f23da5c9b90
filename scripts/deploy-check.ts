// `npm run deploy:check`: what `wrangler deploy --env production` would ship, checked
// without an account. Validates the production settings of wrangler.toml (and of its top
// level, which must be safe to deploy as it is) with the gateway's own settings schema,
// optionally with your secrets, flags the placeholders still to replace, checks that
// Workers Logs keeps the log lines in production, builds the Worker with
// `wrangler deploy --dry-run`, and prints its size. Runs on Node 22's type stripping;
// docs/deploy.md explains each message.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs, parseEnv } from 'node:util';
import { gzipSync } from 'node:zlib';
import { unstable_readConfig } from 'wrangler';
import { parseSettings, type SettingName } from '../worker/config.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `Usage: npm run deploy:check -- [--secrets <file>] [--strict] [--config <file>]

Checks the production settings of wrangler.toml ([env.production], and the top level),
flags placeholders, builds the Worker with \`wrangler deploy --dry-run --env production\`
and prints its size. Exit status 0 when nothing failed, 1 otherwise, 2 for a usage error.

Options:
  --secrets <file>  a dotenv file with your production secrets (UPSTREAM_KEY_ID,
                    UPSTREAM_SECRET, GATEWAY_CALLERS, ADMIN_TOKEN, WEBHOOK_SECRET),
                    checked with the rest; without it, valid stand-ins are used
  --strict          fail on placeholders (resource ids, the upstream address) and on
                    Workers Logs left off: use it right before a real deploy
  --config <file>   the wrangler configuration (default: wrangler.toml)
  -h, --help        show this help
`;

/** The secrets `wrangler secret put` sets; stand-ins satisfy the production rules. */
const STAND_IN_SECRETS: Readonly<Record<string, string>> = {
  UPSTREAM_KEY_ID: 'stand-in-key-id',
  UPSTREAM_SECRET: 'stand-in-merchant-secret',
  GATEWAY_CALLERS: JSON.stringify([
    { name: 'stand-in', token: 'stand-in-caller-token-0123456789abcdef' },
  ]),
  ADMIN_TOKEN: 'stand-in-admin-token-0123456789abcdef',
  WEBHOOK_SECRET: 'stand-in-webhook-secret',
};

/** The committed placeholder ids of wrangler.toml, to be replaced before a deploy. */
const PLACEHOLDER_D1_ID = '00000000-0000-4000-8000-000000000000';
const PLACEHOLDER_KV_ID = '00000000000000000000000000000000';

/** Compressed Worker size limits (Workers Free, Workers Paid), in bytes. */
const FREE_LIMIT_BYTES = 3 * 1024 * 1024;
const PAID_LIMIT_BYTES = 10 * 1024 * 1024;

/** A line of the report. */
interface Finding {
  readonly level: 'ok' | 'warn' | 'FAIL';
  readonly text: string;
}

type WranglerConfig = ReturnType<typeof unstable_readConfig>;

function readConfig(config: string, env: string | undefined): WranglerConfig {
  return unstable_readConfig({ config, ...(env === undefined ? {} : { env }) }, {});
}

/** The settings problems of one environment's vars with the secrets. */
function settingsFindings(
  label: string,
  config: WranglerConfig,
  secrets: Record<string, string>,
): Finding[] {
  const vars = Object.fromEntries(
    Object.entries(config.vars ?? {}).map(([name, value]) => [name, String(value)]),
  );
  const findings: Finding[] = [];
  if (vars.GATEWAY_MODE === 'local') {
    findings.push({ level: 'FAIL', text: `${label}: GATEWAY_MODE is local` });
  }
  const loaded = parseSettings({ ...vars, ...secrets } as Partial<Record<SettingName, string>>);
  if (loaded.ok) findings.push({ level: 'ok', text: `${label}: settings valid for production` });
  else {
    for (const { variable, problem } of loaded.problems) {
      findings.push({ level: 'FAIL', text: `${label}: ${variable} ${problem}` });
    }
  }
  return findings;
}

/** The resource ids and addresses that still hold the committed placeholders. */
function placeholderFindings(config: WranglerConfig, strict: boolean): Finding[] {
  const level = strict ? 'FAIL' : 'warn';
  const findings: Finding[] = [];
  for (const database of config.d1_databases ?? []) {
    if (database.database_id === PLACEHOLDER_D1_ID) {
      findings.push({
        level,
        text: `d1_databases ${database.binding}: database_id is the placeholder (npx wrangler d1 create ${database.database_name})`,
      });
    }
  }
  for (const namespace of config.kv_namespaces ?? []) {
    if (namespace.id === PLACEHOLDER_KV_ID) {
      findings.push({
        level,
        text: `kv_namespaces ${namespace.binding}: id is the placeholder (npx wrangler kv namespace create ${namespace.binding})`,
      });
    }
  }
  const upstream = String(config.vars?.UPSTREAM_BASE_URL ?? '');
  if (URL.canParse(upstream) && new URL(upstream).hostname.endsWith('.invalid')) {
    findings.push({
      level,
      text: 'UPSTREAM_BASE_URL is the placeholder: set the provider address in [env.production.vars]',
    });
  }
  return findings;
}

/**
 * Whether Workers Logs keeps the gateway's log lines: without it the request ids the
 * console and error bodies show cannot be looked up once the live tail is gone.
 */
function observabilityFindings(config: WranglerConfig, strict: boolean): Finding[] {
  const observability = config.observability;
  const logs = observability?.logs;
  const enabled = (logs?.enabled ?? observability?.enabled) === true && logs?.persist !== false;
  if (!enabled) {
    return [
      {
        level: strict ? 'FAIL' : 'warn',
        text: 'observability: Workers Logs off in [env.production]; set enabled = true under [env.production.observability] (docs/deploy.md, "Logs")',
      },
    ];
  }
  const rate = logs?.head_sampling_rate ?? observability?.head_sampling_rate ?? 1;
  if (rate < 1) {
    return [
      {
        level: 'warn',
        text: `observability: head_sampling_rate ${rate} keeps only part of the requests; a request id may not be found`,
      },
    ];
  }
  return [
    { level: 'ok', text: 'observability: Workers Logs on in [env.production], every request' },
  ];
}

/** Builds the Worker as a production deploy would, without uploading it. */
function dryRun(config: string): Finding[] {
  const outdir = mkdtempSync(join(tmpdir(), 'edgepay-deploy-check-'));
  try {
    const run = spawnSync(
      join(root, 'node_modules', '.bin', 'wrangler'),
      ['deploy', '--dry-run', '--env', 'production', '--config', config, '--outdir', outdir],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 180_000,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_UPDATE_NOTIFIER: '1' },
      },
    );
    if (run.status !== 0) {
      const output = `${run.stdout}\n${run.stderr}`.trim().split('\n').slice(-15).join('\n');
      return [{ level: 'FAIL', text: `wrangler deploy --dry-run failed:\n${output}` }];
    }
    const modules = readdirSync(outdir).filter((file) => /\.(m?js|wasm)$/.test(file));
    const bytes = Buffer.concat(modules.map((file) => readFileSync(join(outdir, file))));
    const gzip = gzipSync(bytes).byteLength;
    const level = gzip > PAID_LIMIT_BYTES ? 'FAIL' : gzip > FREE_LIMIT_BYTES ? 'warn' : 'ok';
    const limits = `limits: ${kib(FREE_LIMIT_BYTES)} free, ${kib(PAID_LIMIT_BYTES)} paid, compressed`;
    return [
      {
        level,
        text: `bundle ${modules.join(', ')}: ${kib(bytes.byteLength)} raw, ${kib(gzip)} gzip (${limits})`,
      },
    ];
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function main(args: string[]): number {
  let values: { secrets?: string; strict?: boolean; config?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        secrets: { type: 'string' },
        strict: { type: 'boolean' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`deploy:check: ${error instanceof Error ? error.message : error}\n\n${USAGE}`);
    return 2;
  }
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const config = values.config ?? join(root, 'wrangler.toml');
  let secrets = { ...STAND_IN_SECRETS };
  const findings: Finding[] = [];
  if (values.secrets === undefined) {
    findings.push({
      level: 'warn',
      text: 'secrets: stand-ins used (pass --secrets <file> to check yours)',
    });
  } else {
    try {
      secrets = parseEnv(readFileSync(values.secrets, 'utf8')) as Record<string, string>;
    } catch (error) {
      console.error(
        `deploy:check: cannot read --secrets: ${error instanceof Error ? error.message : error}`,
      );
      return 2;
    }
  }
  const production = readConfig(config, 'production');
  findings.push(...settingsFindings('[env.production]', production, secrets));
  findings.push(...settingsFindings('top level', readConfig(config, undefined), secrets));
  findings.push(...placeholderFindings(production, values.strict === true));
  findings.push(...observabilityFindings(production, values.strict === true));
  findings.push(...dryRun(config));
  for (const { level, text } of findings) console.log(`${level.padEnd(4)} ${text}`);
  const failed = findings.some((finding) => finding.level === 'FAIL');
  console.log(failed ? '\ndeploy:check FAILED' : '\ndeploy:check passed');
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
