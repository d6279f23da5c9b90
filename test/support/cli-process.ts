/**
 * Runs the `edgepay` command line (cli/edgepay.ts) as a real child process, from source:
 * Node 22 strips the types, Bun and Deno run TypeScript themselves.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const ENTRY = join(root, 'cli', 'edgepay.ts');
const STARTUP_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 10_000;

/** The runtime a command line runs under. */
export type CliRuntime = 'node' | 'bun' | 'deno';

function commandLine(runtime: CliRuntime, args: string[]): [string, string[]] {
  switch (runtime) {
    case 'node':
      // The Node running vitest: the project's Node 22 (node_modules/.bin/node).
      return [process.execPath, [ENTRY, ...args]];
    case 'bun':
      return [join(root, 'node_modules', '.bin', 'bun'), [ENTRY, ...args]];
    case 'deno': {
      // The binary itself: node_modules/.bin/deno is a Node wrapper that would take the
      // signals meant for the sandbox and leave Deno running.
      // The npm package puts the binary there on its first run (a fresh `npm ci` does not):
      // run the wrapper once so it does.
      const binary = join(root, 'node_modules', 'deno', 'deno');
      if (!existsSync(binary)) {
        spawnSync(join(root, 'node_modules', '.bin', 'deno'), ['--version'], {
          timeout: STARTUP_TIMEOUT_MS,
        });
      }
      return [binary, ['run', '-A', '--no-lock', ENTRY, ...args]];
    }
  }
}

/** What a finished command printed and its exit status. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command that ends by itself (help, version, usage errors, `edgepay sign`).
 *
 * @param args - the arguments after the program name.
 * @param options - variables added to the environment, and what stdin carries (nothing
 *   by default).
 */
export function runCli(
  args: string[],
  options: { readonly env?: Record<string, string>; readonly input?: string } = {},
): CliResult {
  const [command, argv] = commandLine('node', args);
  const run = spawnSync(command, argv, {
    cwd: root,
    encoding: 'utf8',
    timeout: EXIT_TIMEOUT_MS,
    env: { ...process.env, ...options.env },
    input: options.input ?? '',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A running `edgepay sandbox`. */
export interface RunningCli {
  /** The address it printed, e.g. `http://127.0.0.1:43117`. */
  url: string;
  child: ChildProcess;
  /** Everything printed to stdout so far. */
  stdout(): string;
  /** Everything printed to stderr so far. */
  stderr(): string;
  /** Sends `signal` and resolves with the exit code (`null` when killed by the signal). */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `edgepay sandbox <args>` and resolves once it prints its address.
 *
 * @throws when it exits first or prints no address within 20 s (the child is killed).
 */
export function startCli(args: string[], runtime: CliRuntime = 'node'): Promise<RunningCli> {
  const [command, argv] = commandLine(runtime, ['sandbox', ...args]);
  return startCommand(command, argv, root);
}

/**
 * Starts any command that runs the sandbox (an installed `edgepay` bin,
 * `npx --no-install edgepay`) in `cwd`, and resolves once it prints its address. With
 * `group`, the command gets a process group of its own and `stop` signals the whole group.
 *
 * @throws when it exits first or prints no address within 20 s (the child is killed).
 */
export function startCommand(
  command: string,
  argv: string[],
  cwd: string,
  { group = false }: { group?: boolean } = {},
): Promise<RunningCli> {
  // `group`: a process group of its own, signalled whole (npx does not pass every signal
  // on to the command it runs).
  // The project's Node 22 and binaries first on PATH, as npm scripts have them.
  const path = [dirname(process.execPath), join(root, 'node_modules', '.bin'), process.env.PATH];
  const child = spawn(command, argv, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: group,
    env: { ...process.env, PATH: path.join(':') },
  });
  const signalAll = (signal: NodeJS.Signals) => {
    if (group && child.pid !== undefined) process.kill(-child.pid, signal);
    else child.kill(signal);
  };
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    signalAll(signal);
    const timer = setTimeout(() => signalAll('SIGKILL'), EXIT_TIMEOUT_MS);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      clearInterval(poll);
      clearTimeout(deadline);
      signalAll('SIGKILL');
      reject(new Error(`${reason}\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    child.once('error', (error) => fail(`edgepay sandbox did not start: ${error.message}`));
    const poll = setInterval(() => {
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url !== undefined) {
        clearInterval(poll);
        clearTimeout(deadline);
        resolve({ url, child, stdout: () => stdout, stderr: () => stderr, stop });
      } else if (child.exitCode !== null) {
        fail(`edgepay sandbox exited with ${child.exitCode} before listening`);
      }
    }, 20);
    const deadline = setTimeout(
      () => fail(`edgepay sandbox printed no address within ${STARTUP_TIMEOUT_MS} ms`),
      STARTUP_TIMEOUT_MS,
    );
  });
}
