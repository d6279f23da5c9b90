import process from 'node:process';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { formatMinorUnits, parseMinorUnits } from '../lib/money.ts';
import { resolveOptions } from '../lib/testing/options.ts';
import {
  DEFAULT_SANDBOX_HOST,
  DEFAULT_SANDBOX_PORT,
  type SandboxServer,
  type SandboxServerOptions,
  startSandboxServer,
} from './sandbox-server.ts';
import { UsageError } from './usage-error.ts';

/** The emulator's own defaults (key id, secret, balance, currency), read where they are set. */
const DEFAULTS = resolveOptions({});

/** Options of a sandbox started by `edgepay sandbox`: the address is always set. */
type SandboxCommandOptions = SandboxServerOptions & { port: number; host: string };

/** `edgepay sandbox --help`. */
const SANDBOX_USAGE = `Usage: edgepay sandbox [options]

Serves the payments API sandbox emulator (edgepay/testing) over HTTP: every endpoint,
signed requests, webhooks, a checkout page and /__sandbox/ test controls. Sandbox money
only; the state lives in memory and is gone when it stops (Ctrl-C).

Options:
  --port <n>           TCP port; 0 picks a free one (default: ${DEFAULT_SANDBOX_PORT})
  --host <address>     interface to listen on (default: ${DEFAULT_SANDBOX_HOST}, loopback only;
                       0.0.0.0 exposes the sandbox to the network)
  --key-id <id>        merchant key id requests must send in X-Key-Id
                       (default: ${DEFAULTS.keyId})
  --secret <secret>    merchant API secret: checks request signatures and signs
                       webhooks (default: ${DEFAULTS.secret})
  --webhook-url <url>  http(s) URL the sandbox POSTs its webhooks to when a request
                       names none (default: none; webhooks are only recorded, at
                       GET /__sandbox/webhooks)
  --balance <amount>   opening merchant balance in major units (${DEFAULTS.currency}, not kobo),
                       at most 2 decimal places (default: ${formatMinorUnits(DEFAULTS.openingBalanceMinor)})
  -h, --help           show this help

Examples:
  edgepay sandbox
  edgepay sandbox --port 0 --webhook-url http://127.0.0.1:3000/webhooks
  edgepay sandbox --key-id test-key --secret test-secret --balance 5000.00
`;

/**
 * Reads the arguments of `edgepay sandbox` into server options.
 *
 * @param args - the arguments after `sandbox`.
 * @returns `'help'` for `--help`/`-h`, otherwise the options with every default applied.
 * @throws {UsageError} on an unknown option, a missing value or an invalid one (the
 *   message names the option).
 */
function parseSandboxArgs(args: string[]): 'help' | SandboxCommandOptions {
  let values: ReturnType<typeof parseSandboxValues>;
  try {
    values = parseSandboxValues(args);
  } catch (error) {
    // parseArgs throws only for the command line itself (unknown option, missing value).
    throw new UsageError(error instanceof Error ? error.message : String(error), SANDBOX_USAGE);
  }
  if (values.help === true) return 'help';
  const invalid = (message: string) => new UsageError(message, SANDBOX_USAGE);
  const port = values.port ?? String(DEFAULT_SANDBOX_PORT);
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) {
    throw invalid(`--port must be an integer from 0 to 65535 (got "${port}")`);
  }
  const host = values.host ?? DEFAULT_SANDBOX_HOST;
  if (host === '') throw invalid('--host must not be empty');
  for (const name of ['key-id', 'secret'] as const) {
    if (values[name] === '') throw invalid(`--${name} must not be empty`);
  }
  const webhookUrl = values['webhook-url'];
  if (webhookUrl !== undefined && !/^https?:$/.test(URL.parse(webhookUrl)?.protocol ?? '')) {
    throw invalid(`--webhook-url must be an http:// or https:// URL (got "${webhookUrl}")`);
  }
  const balance = values.balance;
  if (balance !== undefined && parseMinorUnits(balance) === undefined) {
    throw invalid(
      `--balance must be a non-negative amount in major units with at most 2 decimal places, e.g. 5000.00 (got "${balance}")`,
    );
  }
  return {
    port: Number(port),
    host,
    ...(values['key-id'] === undefined ? {} : { keyId: values['key-id'] }),
    ...(values.secret === undefined ? {} : { secret: values.secret }),
    ...(webhookUrl === undefined ? {} : { webhookUrl }),
    ...(balance === undefined ? {} : { openingBalance: balance }),
  };
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'key-id': { type: 'string' },
  secret: { type: 'string' },
  'webhook-url': { type: 'string' },
  balance: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

function parseSandboxValues(args: string[]) {
  return parseArgs({
    args: attachValues(args),
    strict: true,
    allowPositionals: false,
    options: OPTIONS,
  }).values;
}

/**
 * Writes `--option value` as `--option=value`, so a value that starts with a dash (a
 * secret, or a negative balance that the validation then names) is read as the value,
 * as getopt does, instead of parseArgs calling it ambiguous.
 */
function attachValues(args: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    const next = args[index + 1];
    if (arg === '--') return [...joined, ...args.slice(index)];
    const name = arg.slice(2);
    const takesValue =
      Object.hasOwn(OPTIONS, name) && OPTIONS[name as keyof typeof OPTIONS].type === 'string';
    if (arg.startsWith('--') && takesValue && next !== undefined) {
      joined.push(`${arg}=${next}`);
      index++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/**
 * What `edgepay sandbox` prints once it listens. The sandbox is a local test double:
 * printing its own test credentials, which only this sandbox accepts, is its purpose.
 *
 * @param server - the running server.
 * @param options - the options it was started with.
 * @returns the banner text, ending with a newline.
 */
function sandboxBanner(server: SandboxServer, options: SandboxServerOptions): string {
  const settings = resolveOptions(options);
  const webhooks =
    settings.webhookUrl ?? 'not sent (no --webhook-url); recorded at GET /__sandbox/webhooks';
  return `edgepay sandbox listening on ${server.url}
  key id:   ${settings.keyId}
  secret:   ${settings.secret}
  balance:  ${formatMinorUnits(settings.openingBalanceMinor)} ${settings.currency}
  webhooks: ${webhooks}
  controls: ${server.url}/__sandbox/ (docs/sandbox.md)
Press Ctrl-C to stop.
`;
}

/**
 * Runs `edgepay sandbox`: starts the server, prints its address and credentials, and
 * stops it on SIGINT or SIGTERM (exit status 0; a second signal exits at once with 1).
 * A port that cannot be listened on prints the reason and sets exit status 1.
 *
 * @param args - the arguments after `sandbox`.
 * @throws {UsageError} on invalid arguments (see {@link parseSandboxArgs}).
 */
export async function runSandboxCommand(args: string[]): Promise<void> {
  const options = parseSandboxArgs(args);
  if (options === 'help') {
    process.stdout.write(SANDBOX_USAGE);
    return;
  }
  let server: SandboxServer;
  try {
    server = await startSandboxServer(options);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `edgepay sandbox: cannot listen on ${options.host}:${options.port}: ${reason}\n`,
    );
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stdout.write(`edgepay sandbox: ${signal}, stopping\n`);
    // Exit rather than wait for the event loop to drain: a webhook still being sent
    // would hold the process open.
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Printed once a signal stops it cleanly: whoever reads the address may signal at once.
  process.stdout.write(sandboxBanner(server, options));
}
