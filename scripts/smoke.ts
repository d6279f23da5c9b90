// `npm run smoke -- --gateway <url> --token <caller token>`: a short, safe end-to-end
// check of a deployed gateway (or of `npm start`'s). Runs on Node 22's type stripping.
import process from 'node:process';
import { parseArgs } from 'node:util';
import { SmokeCheckError } from './smoke/http.ts';
import { type SmokeOptions, type SmokeStep, smokeSteps } from './smoke/steps.ts';

/** `npm run smoke -- --help`. */
const USAGE = `Usage: npm run smoke -- --gateway <url> --token <caller token> [options]

Checks a running gateway: GET /healthz, GET /banks with the caller token, an
Idempotency-Key replay (with --allow-write), the admin API (with --admin-token) and
that GET /banks without a token is refused. One line per step; exit status 0 when
no step failed, 1 when one did, 2 for a usage error.

Options:
  --gateway <url>       the gateway's base address (http or https), required
  --token <token>       a caller token of GATEWAY_CALLERS, required
  --admin-token <token> the gateway's ADMIN_TOKEN; without it the admin step is skipped
  --allow-write         create one payment session (1.00 NGN, reference smoke-...)
                        to check Idempotency-Key replays; only against a sandbox upstream
  --timeout-ms <n>      deadline of each request in milliseconds (default 10000)
  -h, --help            show this help
`;

/** Deadline of each request when `--timeout-ms` is not given, in milliseconds. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Longest failure detail printed, in characters: a gateway's response may be long. */
const MAX_DETAIL_CHARS = 300;

/** Arguments the smoke test cannot run with; printed with the usage, exit status 2. */
class SmokeUsageError extends Error {
  override name = 'SmokeUsageError';
}

/** The options from the command line, or `undefined` when `--help` was asked for. */
function parseOptions(args: string[]): SmokeOptions | undefined {
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse(args));
  } catch (error) {
    throw new SmokeUsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) return undefined;
  if (values.gateway === undefined) throw new SmokeUsageError('--gateway is required');
  if (values.token === undefined || values.token === '') {
    throw new SmokeUsageError('--token is required');
  }
  let gateway: URL;
  try {
    gateway = new URL(values.gateway);
  } catch {
    throw new SmokeUsageError(`--gateway must be an http or https URL, got "${values.gateway}"`);
  }
  if (gateway.protocol !== 'http:' && gateway.protocol !== 'https:') {
    throw new SmokeUsageError(`--gateway must be an http or https URL, got "${values.gateway}"`);
  }
  const timeoutMs = Number(values['timeout-ms'] ?? DEFAULT_TIMEOUT_MS);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new SmokeUsageError(
      `--timeout-ms must be a positive integer, got "${values['timeout-ms']}"`,
    );
  }
  return {
    gateway: `${gateway.origin}${gateway.pathname}`.replace(/\/+$/, ''),
    token: values.token,
    adminToken: values['admin-token'] || undefined,
    allowWrite: values['allow-write'] === true,
    timeoutMs,
  };
}

function parse(args: string[]) {
  return parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      gateway: { type: 'string' },
      token: { type: 'string' },
      'admin-token': { type: 'string' },
      'allow-write': { type: 'boolean' },
      'timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** One step's line: outcome, name, latency (`-` when skipped), then why it failed or was skipped. */
function line(outcome: 'ok' | 'FAIL' | 'skipped', name: string, ms: string, detail = ''): string {
  return `${outcome.padEnd(8)} ${name.padEnd(20)} ${ms.padStart(8)}${detail && `  ${detail}`}`;
}

/**
 * Why a step failed, in one line: the check, then the response's status and the gateway's
 * error `code` and `message` when there was a response. Tokens are masked, should an
 * answer ever echo one.
 */
function failureDetail(error: unknown, secrets: string[]): string {
  let detail = error instanceof Error ? error.message : String(error);
  if (error instanceof SmokeCheckError && error.answer !== undefined) {
    const { status, json } = error.answer;
    const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
    const code = typeof body.code === 'string' ? ` ${body.code}` : '';
    const message = typeof body.message === 'string' ? `: ${body.message}` : '';
    detail = `${detail}, got ${status}${code}${message}`;
  }
  for (const secret of secrets) detail = detail.replaceAll(secret, '***');
  detail = detail.replace(/\s+/g, ' ');
  return detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS)}...` : detail;
}

/** Runs one step, unless it is skipped, and prints its line. @returns its outcome. */
async function runStep(step: SmokeStep, secrets: string[]): Promise<'ok' | 'FAIL' | 'skipped'> {
  if (step.skipReason !== undefined) {
    console.log(line('skipped', step.name, '-', `(${step.skipReason})`));
    return 'skipped';
  }
  const started = performance.now();
  try {
    await step.run();
    console.log(line('ok', step.name, `${Math.round(performance.now() - started)} ms`));
    return 'ok';
  } catch (error) {
    const ms = `${Math.round(performance.now() - started)} ms`;
    console.log(line('FAIL', step.name, ms, failureDetail(error, secrets)));
    return 'FAIL';
  }
}

/**
 * Runs the smoke test: every step in order, one line each, then a summary line.
 *
 * @param args - the arguments after the script name.
 * @returns the exit status: 0 when no step failed, 1 when one did, 2 for a usage error.
 */
async function main(args: string[]): Promise<number> {
  let options: SmokeOptions | undefined;
  try {
    options = parseOptions(args);
  } catch (error) {
    if (!(error instanceof SmokeUsageError)) throw error;
    process.stderr.write(`smoke: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === undefined) {
    process.stdout.write(USAGE);
    return 0;
  }
  const secrets = [options.token, options.adminToken].filter((s): s is string => Boolean(s));
  console.log(
    `smoke: ${options.gateway} (admin token ${options.adminToken ? 'given' : 'not given'}, ` +
      `writes ${options.allowWrite ? 'allowed' : 'not allowed'}, timeout ${options.timeoutMs} ms)`,
  );
  const counts = { ok: 0, FAIL: 0, skipped: 0 };
  for (const step of smokeSteps(options)) counts[await runStep(step, secrets)] += 1;
  console.log(`smoke: ${counts.ok} ok, ${counts.FAIL} failed, ${counts.skipped} skipped`);
  return counts.FAIL === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`smoke: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
