// What the wrangler dev benchmarks share: starting Workers and applying migrations.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** The repository root. */
export const root = join(import.meta.dirname, '..');
/** Every benchmark server listens here only. */
export const HOST = '127.0.0.1';

const wrangler = join(root, 'node_modules', '.bin', 'wrangler');
// No prompts, no telemetry, no update checks: the machine may have no network.
const quiet = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  NO_UPDATE_NOTIFIER: '1',
  CI: 'true',
};

/**
 * Starts `wrangler dev` on `port` with local state in `state`, resolving once it is ready.
 * Its output is drained, never kept: the load generator shares this process and the machine.
 *
 * @param args - extra wrangler dev arguments (`-c`, `--env-file`, `--var`...).
 * @throws when wrangler exits before it is ready (with its output).
 */
export function startWorker(args: string[], port: number, state: string): Promise<ChildProcess> {
  const child = spawn(
    wrangler,
    [
      'dev',
      '--ip',
      HOST,
      '--port',
      String(port),
      '--persist-to',
      state,
      '--show-interactive-dev-session=false',
      ...args,
    ],
    { cwd: root, env: quiet, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Ready on')) return;
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.stdout?.resume();
      child.stderr?.resume();
      resolve(child);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`wrangler dev exited ${code}:\n${output}`)));
  });
}

/**
 * Applies the D1 migrations to the local state in `state`.
 *
 * @throws when wrangler fails.
 */
export function migrate(state: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      wrangler,
      ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state],
      {
        cwd: root,
        env: quiet,
        stdio: 'ignore',
      },
    );
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`migrations exited ${code}`)),
    );
  });
}
