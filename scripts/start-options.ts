// `npm start`'s command line: the three ports of the local stack, each from its option, else
// its variable, else its default. Wrangler's own default port is the gateway's, so anyone
// already running another Worker meets a taken 8787 first: the options, and a message that
// names the option when a port is taken, are how they move off it.
import { createServer } from 'node:net';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../cli/usage-error.ts';

/** Who listens where: the option and variable that set each port, and its default. */
const PORT_SETTINGS = [
  { role: 'gateway', option: 'port', variable: 'EDGEPAY_GATEWAY_PORT', fallback: 8787 },
  { role: 'sandbox', option: 'sandbox-port', variable: 'EDGEPAY_SANDBOX_PORT', fallback: 8788 },
  {
    role: 'receiver',
    option: 'receiver-port',
    variable: 'EDGEPAY_RECEIVER_PORT',
    fallback: 8789,
  },
] as const;

/** One entry of {@link PORT_SETTINGS}. */
type PortSetting = (typeof PORT_SETTINGS)[number];

/** The loopback ports of the stack, by role. */
export type StartPorts = Record<PortSetting['role'], number>;

/** What `npm start`'s command line and variables say. */
export interface StartOptions {
  readonly ports: StartPorts;
  /** Show all of wrangler's output (`--verbose`), not only what a local stack needs. */
  readonly verbose: boolean;
}

/** `npm start -- --help`. */
export const START_USAGE = `Usage: npm start -- [options]

Runs the local stack on 127.0.0.1, nothing deployed: the sandbox emulator, the gateway
(wrangler dev, local D1 and KV) in front of it, and the example webhook receiver.

Options:
  --port <n>           the gateway's port (default: 8787; or EDGEPAY_GATEWAY_PORT)
  --sandbox-port <n>   the sandbox emulator's port (default: 8788; or EDGEPAY_SANDBOX_PORT)
  --receiver-port <n>  the example receiver's port (default: 8789; or EDGEPAY_RECEIVER_PORT)
  --verbose            show all of wrangler's output (its bindings tables, its notices)
  -h, --help           show this help

An option wins over its variable. Each port is a whole number from 1 to 65535, and the
three differ.

Example:
  npm start -- --port 8790 --sandbox-port 8791 --receiver-port 8792
`;

const OPTIONS = {
  port: { type: 'string' },
  'sandbox-port': { type: 'string' },
  'receiver-port': { type: 'string' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/**
 * Reads `npm start`'s arguments and the port variables.
 *
 * @param args - the arguments after the script (`process.argv.slice(2)`).
 * @param env - the environment the `EDGEPAY_*_PORT` variables are read from.
 * @returns `'help'` for `--help`/`-h`, otherwise the three ports and whether `--verbose`
 *   was given.
 * @throws {UsageError} on an unknown option, a missing value, a value that is not a port
 *   (naming the option or variable it came from), or two roles on one port.
 */
export function readStartOptions(args: string[], env: NodeJS.ProcessEnv): 'help' | StartOptions {
  let values: ReturnType<typeof parseStartValues>;
  try {
    values = parseStartValues(args);
  } catch (error) {
    // parseArgs throws only for the command line itself (unknown option, missing value).
    throw new UsageError(error instanceof Error ? error.message : String(error), START_USAGE);
  }
  if (values.help === true) return 'help';
  const ports = {} as StartPorts;
  const owners = new Map<number, PortSetting>();
  for (const setting of PORT_SETTINGS) {
    const fromOption = values[setting.option];
    const fromVariable = env[setting.variable];
    const [text, source] =
      fromOption !== undefined
        ? [fromOption, `--${setting.option}`]
        : fromVariable !== undefined && fromVariable !== ''
          ? [fromVariable, setting.variable]
          : [String(setting.fallback), 'the default'];
    if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65_535) {
      throw new UsageError(
        `${source} must be a port, a whole number from 1 to 65535 (got "${text}")`,
        START_USAGE,
      );
    }
    const port = Number(text);
    const other = owners.get(port);
    if (other !== undefined) {
      throw new UsageError(
        `the ${other.role} and the ${setting.role} cannot both use port ${port}: ` +
          `give each its own with --${other.option} and --${setting.option}`,
        START_USAGE,
      );
    }
    owners.set(port, setting);
    ports[setting.role] = port;
  }
  return { ports, verbose: values.verbose === true };
}

function parseStartValues(args: string[]) {
  return parseArgs({ args, strict: true, allowPositionals: false, options: OPTIONS }).values;
}

/**
 * What `npm start` says when a port is taken: the port, who wanted it, and the option and
 * variable that move it.
 *
 * @param setting - the role whose port is taken.
 * @param port - the port.
 * @param host - the interface, `127.0.0.1`.
 */
function portTakenMessage(setting: PortSetting, port: number, host: string): string {
  return (
    `port ${port} on ${host} is taken, and the ${setting.role} needs it. ` +
    `Stop what listens there, or choose another port: ` +
    `npm start -- --${setting.option} <n> (or ${setting.variable}=<n>)`
  );
}

/**
 * Checks that each port can be listened on, before anything starts, so a taken port
 * leaves nothing running. Something may still take a port between the check and the
 * listen; the listeners then fail with the same message.
 *
 * @param ports - the stack's ports.
 * @param host - the interface they are listened on.
 * @throws {Error} with {@link portTakenMessage} for the first port that is taken, or the
 *   system's reason for another failure (e.g. a port below 1024 without the right).
 */
export async function checkPortsFree(ports: StartPorts, host: string): Promise<void> {
  for (const setting of PORT_SETTINGS) {
    const port = ports[setting.role];
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port, host, exclusive: true }, resolve);
      });
    } catch (error) {
      throw isAddressInUse(error)
        ? new Error(portTakenMessage(setting, port, host))
        : new Error(`the ${setting.role} cannot listen on ${host}:${port}: ${String(error)}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }
}

/** Whether `error` is the system's "address already in use". */
function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}

/**
 * The error to report when a listener of the stack fails: a taken port gets
 * {@link portTakenMessage}, anything else is returned as it is.
 *
 * @param role - whose listener failed.
 * @param ports - the stack's ports.
 * @param host - the interface.
 * @param error - what the listener threw.
 */
export function listenFailure(
  role: PortSetting['role'],
  ports: StartPorts,
  host: string,
  error: unknown,
): unknown {
  const setting = PORT_SETTINGS.find((candidate) => candidate.role === role);
  if (setting === undefined || !isAddressInUse(error)) return error;
  return new Error(portTakenMessage(setting, ports[role], host));
}
