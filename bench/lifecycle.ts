// How a benchmark run starts and ends: it refuses to start on a taken port, and whatever
// way it ends (success, a thrown error, Ctrl-C, SIGTERM, an uncaught exception) it stops
// every process it started, wrangler's workerd children included.
import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every benchmark server listens here only. */
export const HOST = '127.0.0.1';

/**
 * A failure the benchmark detected itself (a taken port, a response that was not 2xx):
 * its message says everything, so it is printed without a stack.
 */
export class BenchmarkError extends Error {
  override name = 'BenchmarkError';
}

type Cleanup = () => Promise<void> | void;
const cleanups: Cleanup[] = [];
/** Leaders (pid = process group id) of the process groups started and not yet stopped. */
const groups = new Set<number>();
let cleaning: Promise<void> | undefined;
let failed = false;

/** Registers `cleanup` to run when the benchmark ends, however it ends; the last registered runs first. */
export function onCleanup(cleanup: Cleanup): void {
  cleanups.push(cleanup);
}

function cleanUp(): Promise<void> {
  // One pass however many ways the run ends at once (a signal while main's finally runs).
  cleaning ??= (async () => {
    for (let cleanup = cleanups.pop(); cleanup !== undefined; cleanup = cleanups.pop()) {
      try {
        await cleanup();
      } catch (error) {
        console.error('cleanup failed:', error);
      }
    }
  })();
  return cleaning;
}

function killGroupsNow(): void {
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
}

/**
 * Runs a benchmark's `main`, then stops everything it started. SIGINT, SIGTERM, SIGHUP,
 * an uncaught exception or an unhandled rejection also stop everything, then exit
 * non-zero; a second signal kills what is left at once. As a last resort, process groups
 * still running when the process exits are sent SIGKILL.
 *
 * @param main - the benchmark; resolves when it has printed its results.
 */
export async function runBenchmark(main: () => Promise<void>): Promise<void> {
  let stopping = false;
  // A repeated signal means "now": what is left is killed at once. Further errors while
  // stopping (every open connection may throw the same one) are not repeated.
  const stop = async (code: number, reason: unknown, isSignal: boolean) => {
    failed = true;
    if (stopping) {
      if (!isSignal) return;
      report(`${reason}: killing what is left`);
      killGroupsNow();
      process.exit(code);
    }
    stopping = true;
    report(reason);
    await cleanUp();
    process.exit(code);
  };
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(
      signal,
      () => void stop(code, `${signal}: stopping everything this run started`, true),
    );
  }
  process.on('uncaughtException', (error) => void stop(1, error, false));
  process.on('unhandledRejection', (error) => void stop(1, error, false));
  process.on('exit', killGroupsNow);
  try {
    await main();
  } catch (error) {
    failed = true;
    report(error);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

function report(reason: unknown): void {
  if (typeof reason === 'string') console.error(`\n${reason}`);
  else if (reason instanceof BenchmarkError) console.error(`\n${reason.message}`);
  else console.error('\nThe benchmark failed:', reason);
}

/**
 * Refuses to start when any of `ports` is already taken on {@link HOST}: a server left over
 * from an earlier run would otherwise answer in place of the one this run starts, and be
 * measured instead.
 *
 * @throws {BenchmarkError} naming every taken port and, where `ss` can tell, its holder.
 */
export async function assertPortsFree(ports: number[]): Promise<void> {
  const taken: number[] = [];
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => resolve(true)));
    });
    if (!free) taken.push(port);
  }
  if (taken.length === 0) return;
  throw new BenchmarkError(
    `Not starting: port${taken.length > 1 ? 's' : ''} ${taken.join(', ')} on ${HOST} already taken (a wrangler or workerd ` +
      `left over from an earlier run?). Stop whatever holds ${taken.length > 1 ? 'them' : 'it'} ` +
      `first.\n${holders(taken)}`,
  );
}

function holders(ports: number[]): string {
  try {
    const filter = ports.map((port) => `sport = :${port}`).join(' or ');
    return execFileSync('ss', ['-Hltnp', filter], { encoding: 'utf8', timeout: 5000 });
  } catch {
    return `(see \`ss -ltnp\` or \`pgrep -af workerd\`)`;
  }
}

/**
 * Spawns `command` as the leader of its own process group, so stopping it also stops
 * every process it spawned (wrangler runs workerd as children), and registers the stop.
 * The group is in the background: the terminal's Ctrl-C reaches only this process, whose
 * handler stops the group.
 */
export function spawnGroup(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  const pgid = child.pid;
  // A spawn failure is reported by 'exit'/'error' to whoever waits on the child.
  child.on('error', () => {});
  if (pgid === undefined) return child;
  groups.add(pgid);
  onCleanup(() => stopGroup(pgid));
  return child;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * Whether any process of group `pgid` is still running. Exited processes nobody has reaped
 * (zombies: this machine's init does not reap orphans) hold no port and use no CPU, so
 * they do not count.
 */
function groupRunning(pgid: number): boolean {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  return groupMembers(pgid).some((member) => member.state !== 'Z');
}

/** A process of a group, from `/proc/<pid>/stat` (Linux). */
export interface GroupMember {
  pid: number;
  /** R running, S sleeping, Z zombie... */
  state: string;
  /** User plus system CPU time so far, in clock ticks (usually 1/100 s). */
  cpuTicks: number;
}

/** The processes of process group `pgid`, read from `/proc` (empty where there is none). */
export function groupMembers(pgid: number): GroupMember[] {
  const members: GroupMember[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // After the command name in parentheses: state ppid pgrp session ... utime(14) stime(15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    members.push({
      pid: Number(entry),
      state: fields[0] ?? '?',
      cpuTicks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return members;
}

/**
 * Stops process group `pgid`: SIGTERM, up to `graceMs` to exit, then SIGKILL.
 *
 * @param graceMs - milliseconds allowed for a clean exit. @default 5000
 */
async function stopGroup(pgid: number, graceMs = 5000): Promise<void> {
  if (!groups.has(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  for (const deadline = Date.now() + graceMs; groupRunning(pgid) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (groupRunning(pgid)) {
    signalGroup(pgid, 'SIGKILL');
    for (const deadline = Date.now() + 2000; groupRunning(pgid) && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (groupRunning(pgid)) console.error(`process group ${pgid} survived SIGKILL`);
  }
  groups.delete(pgid);
}

/**
 * A fresh directory under the system's temporary directory for local state and logs,
 * removed when the run succeeds and kept (its path printed) when it fails, since the
 * Workers' logs there say what went wrong.
 *
 * @param prefix - the directory name's prefix.
 */
export function tempState(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => {
    if (failed) console.error(`Local state and wrangler output kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
