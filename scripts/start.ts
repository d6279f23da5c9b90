// `npm start`: the main job on an embedded default. Brings up, with nothing
// deployed: the sandbox emulator on 127.0.0.1:8788 and the gateway (wrangler dev, local
// D1 and KV, migrations applied) on 127.0.0.1:8787 in front of it, and the example
// webhook receiver (examples/receiver) on 127.0.0.1:8789, subscribed through the admin API.
// It also fires wrangler.toml's cron triggers on their schedule (scripts/local-cron.ts),
// which wrangler dev does not do by itself. `npm start -- --help` lists the options that
// move the three ports (scripts/start-options.ts).
// The tokens and credentials it uses are listed in docs/sandbox.md, "Local defaults".
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseEnv } from 'node:util';
import { startSandboxServer } from '../cli/sandbox-server.ts';
import { UsageError } from '../cli/usage-error.ts';
import { type Receiver, startReceiver } from '../examples/receiver/server.ts';
import {
  applyLocalMigrations,
  gatewayDevArgs,
  QUIET_ENV,
  ROOT as root,
  stopGateway,
  waitForGateway,
  WRANGLER as wrangler,
} from './gateway-dev.ts';
import { type LocalCron, readCrons, startLocalCron } from './local-cron.ts';
import {
  checkPortsFree,
  listenFailure,
  readStartOptions,
  START_USAGE,
  type StartOptions,
} from './start-options.ts';
import { WranglerOutputFilter } from './wrangler-output.ts';

const HOST = '127.0.0.1';

/**
 * The ports, from the options, else the `EDGEPAY_*_PORT` variables, else 8787-8789, and
 * `--verbose`.
 * `--help` and a bad command line end the process here, before anything starts.
 */
function optionsOrExit(): StartOptions {
  try {
    const read = readStartOptions(process.argv.slice(2), process.env);
    if (read !== 'help') return read;
    process.stdout.write(START_USAGE);
    process.exit(0);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`start: ${error.message}\n\n${error.usage}`);
    process.exit(2);
  }
}

const { ports: PORTS, verbose: VERBOSE } = optionsOrExit();
const GATEWAY_PORT = PORTS.gateway;
const SANDBOX_PORT = PORTS.sandbox;
const RECEIVER_PORT = PORTS.receiver;
const receiverUrl = `http://${HOST}:${RECEIVER_PORT}/`;
/** Marks the subscription `npm start` owns, so reruns (local D1 persists) reuse it. */
const RECEIVER_DESCRIPTION = 'example receiver (npm start)';
const gatewayUrl = `http://${HOST}:${GATEWAY_PORT}`;
const sandboxUrl = `http://${HOST}:${SANDBOX_PORT}`;
// The end-to-end test runs with the committed defaults and its own local state.
const varsFile = process.env.EDGEPAY_VARS_FILE ?? join(root, '.dev.vars');
const persistTo = process.env.EDGEPAY_PERSIST_TO;
// Tests only: run the cron triggers this often (milliseconds) instead of on their schedule.
const cronIntervalMs = readCronInterval(process.env.EDGEPAY_CRON_INTERVAL_MS);

function readCronInterval(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 100) {
    throw new Error(`EDGEPAY_CRON_INTERVAL_MS must be a whole number of milliseconds >= 100`);
  }
  return ms;
}

/** The local secrets, creating `.dev.vars` from the example when it is missing. */
function loadDevVars(): NodeJS.Dict<string> {
  if (!existsSync(varsFile)) {
    copyFileSync(join(root, '.dev.vars.example'), varsFile);
    console.log(`start: created ${varsFile} from .dev.vars.example`);
  }
  return parseEnv(readFileSync(varsFile, 'utf8'));
}

function callerTokens(vars: NodeJS.Dict<string>): string {
  try {
    const callers = JSON.parse(vars.GATEWAY_CALLERS ?? '[]') as { name: string; token: string }[];
    return callers.map((caller) => `Bearer ${caller.token} (${caller.name})`).join(', ');
  } catch {
    return 'GATEWAY_CALLERS in .dev.vars is not valid JSON';
  }
}

/** The first caller's token, for the banner's example (a placeholder when none parses). */
function firstCallerToken(vars: NodeJS.Dict<string>): string {
  try {
    const [first] = JSON.parse(vars.GATEWAY_CALLERS ?? '[]') as { token?: unknown }[];
    return typeof first?.token === 'string' ? first.token : '<gateway token>';
  } catch {
    return '<gateway token>';
  }
}

interface SubscriptionResponse {
  id: string;
  url: string;
  description: string | null;
  secret?: string;
}

/** One admin API call; throws on a non-2xx response. */
async function admin(
  vars: NodeJS.Dict<string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${gatewayUrl}/admin/subscriptions${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${vars.ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`admin ${method} ${path || '/'}: ${response.status} ${text}`);
  return (JSON.parse(text) as { data: unknown }).data;
}

/**
 * Where `npm start` keeps the receiver's subscription id and secret, in the local state beside
 * D1 (wrangler's `.wrangler/state` unless `EDGEPAY_PERSIST_TO` says otherwise): the admin API
 * shows a secret once, and a restart on the same state must not rotate it.
 */
const receiverSecretFile = join(
  persistTo ?? join(root, '.wrangler', 'state'),
  'edgepay-receiver-secret.json',
);

/** The receiver's subscription as a previous start left it. */
function keptReceiver(): { id: string; secret: string } | undefined {
  try {
    const kept = JSON.parse(readFileSync(receiverSecretFile, 'utf8')) as Record<string, unknown>;
    return typeof kept.id === 'string' && typeof kept.secret === 'string'
      ? { id: kept.id, secret: kept.secret }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The receiver's subscription and its signing secret: the one with
 * {@link RECEIVER_DESCRIPTION} is reused (URL and enabled refreshed) with the secret a
 * previous start kept; only when that secret was not kept (the file deleted, another
 * state) is it rotated, since the admin API shows a secret once. Otherwise one is created.
 */
async function subscribeReceiver(vars: NodeJS.Dict<string>): Promise<SubscriptionResponse> {
  const existing = (await admin(vars, 'GET', '')) as SubscriptionResponse[];
  const mine = existing.find((subscription) => subscription.description === RECEIVER_DESCRIPTION);
  let subscription: SubscriptionResponse;
  if (mine === undefined) {
    subscription = (await admin(vars, 'POST', '', {
      url: receiverUrl,
      description: RECEIVER_DESCRIPTION,
    })) as SubscriptionResponse;
  } else {
    await admin(vars, 'PATCH', `/${mine.id}`, { url: receiverUrl, enabled: true });
    const kept = keptReceiver();
    if (kept?.id === mine.id) return { ...mine, secret: kept.secret };
    subscription = (await admin(vars, 'POST', `/${mine.id}/rotate-secret`)) as SubscriptionResponse;
  }
  mkdirSync(dirname(receiverSecretFile), { recursive: true });
  writeFileSync(
    receiverSecretFile,
    JSON.stringify({ id: subscription.id, secret: subscription.secret }),
    { mode: 0o600 },
  );
  return subscription;
}

/**
 * Prints wrangler dev's output line by line, stdout to stdout and stderr to stderr, through
 * {@link WranglerOutputFilter} unless `verbose`.
 */
function showOutput(child: ChildProcess, verbose: boolean): void {
  const streams = [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const;
  for (const [from, to] of streams) {
    if (from === null) continue;
    const quiet = new WranglerOutputFilter();
    createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      const shown = verbose ? line : quiet.filter(line);
      if (shown !== null) to.write(`${shown}\n`);
    });
  }
}

/** The banner's line about the cron triggers `npm start` runs itself. */
function cronLine(cron: LocalCron): string {
  if (cron.running.length === 0)
    return 'none runs locally (none in wrangler.toml, or see the errors above)';
  const when =
    cronIntervalMs === undefined ? 'on its schedule (UTC)' : `every ${cronIntervalMs} ms (test)`;
  return `${cron.running.join(', ')} runs locally ${when}: relay sweeper, event purge`;
}

function banner(vars: NodeJS.Dict<string>, cron: LocalCron): string {
  return `
edgepay is running (sandbox money only)

  gateway   ${gatewayUrl}     Authorization: ${callerTokens(vars)}
  admin     ${gatewayUrl}/admin   Authorization: Bearer ${vars.ADMIN_TOKEN}
  console   ${gatewayUrl}/console/   the operator console; sign in with the admin token
  sandbox   ${sandboxUrl}     key id ${vars.UPSTREAM_KEY_ID}, secret ${vars.UPSTREAM_SECRET}
            opening balance 1,000,000.00 NGN; controls under ${sandboxUrl}/__sandbox/
  webhooks  sandbox -> ${gatewayUrl}/webhooks (signed with the merchant secret)
  receiver  ${receiverUrl}     examples/receiver, prints each verified delivery here
  cron      ${cronLine(cron)}

  Try: curl -s ${gatewayUrl}/banks -H 'Authorization: Bearer ${firstCallerToken(vars)}'
  The README has the whole curl session. Ctrl-C stops everything.
`;
}

async function main(): Promise<void> {
  // First, so a taken port leaves nothing started (and no local state touched).
  await checkPortsFree(PORTS, HOST);
  const vars = loadDevVars();
  // Read before anything starts, so an unreadable wrangler.toml leaves nothing running.
  const crons = readCrons(join(root, 'wrangler.toml'));
  applyLocalMigrations(persistTo);
  console.log('start: D1 migrations applied (local)');
  const sandbox = await startSandboxServer({
    ...(vars.UPSTREAM_KEY_ID === undefined ? {} : { keyId: vars.UPSTREAM_KEY_ID }),
    ...(vars.UPSTREAM_SECRET === undefined ? {} : { secret: vars.UPSTREAM_SECRET }),
    port: SANDBOX_PORT,
    host: HOST,
    publicBaseUrl: sandboxUrl,
    webhookUrl: `${gatewayUrl}/webhooks`,
  }).catch((error: unknown) => {
    throw listenFailure('sandbox', PORTS, HOST, error);
  });
  console.log(`start: sandbox listening on ${sandbox.url}`);
  const gateway = spawn(
    wrangler,
    gatewayDevArgs({ host: HOST, port: GATEWAY_PORT, varsFile, sandboxUrl, persistTo }),
    // A process group of its own: a terminal's Ctrl-C reaches this script alone, which
    // stops wrangler in order (workerd signalled at once made wrangler report a crash).
    { cwd: root, env: QUIET_ENV, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  showOutput(gateway, VERBOSE);
  let stopping = false;
  let receiver: Receiver | undefined;
  let cron: LocalCron | undefined;
  const stop = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    cron?.stop();
    await Promise.all([stopGateway(gateway), sandbox.close(), receiver?.close()]);
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // The gateway is in a group of its own: a closed terminal must stop it too.
  process.on('SIGHUP', () => void stop(0));
  gateway.on('exit', (code) => {
    if (!stopping) {
      console.error(`start: wrangler dev exited (${code}); stopping`);
      void stop(code ?? 1);
    }
  });
  try {
    await waitForGateway(gateway, gatewayUrl, 60_000);
  } catch (error) {
    console.error('start:', error instanceof Error ? error.message : error);
    await stop(1);
    return;
  }
  try {
    const subscription = await subscribeReceiver(vars);
    if (subscription.secret === undefined) throw new Error('the admin API returned no secret');
    receiver = await startReceiver({
      secret: subscription.secret,
      port: RECEIVER_PORT,
      host: HOST,
    });
    console.log(`start: receiver listening on ${receiver.url} (subscription ${subscription.id})`);
  } catch (caught) {
    // Do not leave wrangler dev running behind a failed start.
    const error = listenFailure('receiver', PORTS, HOST, caught);
    console.error('start: receiver:', error instanceof Error ? error.message : error);
    await stop(1);
    return;
  }
  // wrangler dev never fires cron triggers itself ("not automatically triggered during
  // local development"): without this the local relay would never heal a lost delivery.
  cron = startLocalCron({
    gatewayUrl,
    crons,
    intervalMs: cronIntervalMs,
    log: (line) => console.log(`start: ${line}`),
    error: (line) => console.error(`start: ${line}`),
  });
  console.log(banner(vars, cron));
}

main().catch((error: unknown) => {
  console.error('start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
