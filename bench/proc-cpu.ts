// CPU time as Linux counts it, from /proc: the thread that runs a Worker's isolate, and
// every process of a `wrangler dev`. Where /proc cannot tell (another OS, a process gone),
// the response is undefined.
import { readFileSync } from 'node:fs';
import { groupMembers } from './lifecycle.ts';
import type { LoadResult } from './load.ts';

/** Linux counts process CPU time in clock ticks of 1/100 s (`getconf CLK_TCK`). */
const MS_PER_CLOCK_TICK = 10;

/** A thread's time, in milliseconds. */
export interface ThreadTime {
  /** On a core. */
  cpuMs: number;
  /** Ready to run, waiting for a core (other processes had both). */
  waitMs: number;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The workerd process that runs the Worker of a `wrangler dev` process group: of the two
 * wrangler starts, the one with a DevTools inspector (the other runs wrangler's proxy in
 * front of it). workerd runs the isolate on its main thread.
 *
 * @param pgid - the wrangler process, leader of its group.
 */
export function isolateProcess(pgid: number): number | undefined {
  return groupMembers(pgid).find(({ pid }) =>
    read(`/proc/${pid}/cmdline`)?.includes('--inspector-addr'),
  )?.pid;
}

/** The time of the main thread of process `pid` so far, from its schedstat (nanoseconds). */
export function threadTime(pid: number): ThreadTime | undefined {
  const [onCpu, waiting] = (read(`/proc/${pid}/task/${pid}/schedstat`) ?? '').split(' ');
  if (waiting === undefined) return undefined;
  return { cpuMs: Number(onCpu) / 1e6, waitMs: Number(waiting) / 1e6 };
}

/** CPU time so far of every process of group `pgid`, in milliseconds (10 ms resolution). */
export function stackCpuMs(pgid: number): number | undefined {
  const members = groupMembers(pgid);
  if (members.length === 0) return undefined;
  return members.reduce((sum, member) => sum + member.cpuTicks, 0) * MS_PER_CLOCK_TICK;
}

/** A Worker's time per request, in milliseconds: its isolate thread's, and its whole stack's. */
export interface WorkerTime extends ThreadTime {
  /** CPU of every process of its `wrangler dev` (10 ms resolution per process). */
  stackMs: number;
}

/**
 * Counts, over load runs and per request answered, the time of a Worker's isolate thread
 * and the CPU of every process of its `wrangler dev`, with no profiler attached.
 *
 * @param wranglerPid - the Worker's wrangler process, leader of its process group.
 * @throws when /proc does not show the Worker's workerd.
 */
export function workerCpuMeter(wranglerPid: number) {
  const isolate = isolateProcess(wranglerPid);
  if (isolate === undefined) throw new Error(`no workerd with an inspector under ${wranglerPid}`);
  const read = () => {
    const thread = threadTime(isolate);
    const stackMs = stackCpuMs(wranglerPid);
    if (thread === undefined || stackMs === undefined) {
      throw new Error(`the Worker of wrangler ${wranglerPid} is gone`);
    }
    return { ...thread, stackMs };
  };
  const total: WorkerTime = { cpuMs: 0, waitMs: 0, stackMs: 0 };
  let answered = 0;
  return {
    /** Runs `load`, counting its requests and the Worker's time meanwhile. */
    async around(load: () => Promise<LoadResult>): Promise<LoadResult> {
      const before = read();
      const result = await load();
      const after = read();
      total.cpuMs += after.cpuMs - before.cpuMs;
      total.waitMs += after.waitMs - before.waitMs;
      total.stackMs += after.stackMs - before.stackMs;
      answered += result.answered;
      return result;
    },
    /** Milliseconds per request so far. */
    perRequest: (): WorkerTime => ({
      cpuMs: total.cpuMs / answered,
      waitMs: total.waitMs / answered,
      stackMs: total.stackMs / answered,
    }),
  };
}
