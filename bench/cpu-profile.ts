// A Worker isolate's CPU time per request, which is what Workers bills and limits: a V8
// CPU profile taken over the DevTools protocol from `wrangler dev`'s inspector while
// autocannon drives one case. CPU ms per request = the profile's sampled time outside
// "(idle)" / the requests answered while it ran.
//
// Connect before any load. wrangler's inspector proxy keeps the Worker's Runtime domain
// enabled and, while no DevTools client is connected, buffers every message it sends (one
// per console call, so one per request here); a client connecting later is sent the whole
// backlog at once, with a loopback request to wrangler per message: after a few minutes
// of load that exhausts the file descriptors of wrangler and its proxy.
import type autocannon from 'autocannon';
import { HOST } from './lifecycle.ts';
import { type LoadResult, runLoad } from './load.ts';
import { isolateProcess, stackCpuMs, type ThreadTime, threadTime } from './proc-cpu.ts';

/** Microseconds between two samples of the profiler. */
const SAMPLING_INTERVAL_US = 500;
/** Longest wait for a response from the inspector, in milliseconds. */
const INSPECTOR_TIMEOUT_MS = 30_000;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** A V8 `Profiler.Profile`: sampled node ids and the microseconds before each sample. */
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What {@link profileLoad} measured. */
export interface CpuProfileResult {
  load: LoadResult;
  profile: Profile;
  /** The isolate's sampled time outside "(idle)", in milliseconds. */
  busyMs: number;
  /** {@link busyMs} per request answered, in milliseconds. */
  cpuMsPerRequest: number;
  /**
   * Per request, in milliseconds, from `/proc`: the CPU time of the thread running the
   * isolate, and the time it was ready to run but waiting for a core; undefined where
   * `/proc` cannot tell. A cross-check: the profile counts every moment the isolate was
   * not idle, on a core or not.
   */
  thread: ThreadTime | undefined;
  /**
   * CPU time of every process of the Worker's `wrangler dev` (wrangler's Node, which parses
   * and prints the log lines, and its workerd processes) per request, in milliseconds, from
   * `/proc`; undefined where there is no `/proc`.
   */
  stackCpuMsPerRequest: number | undefined;
}

type Send = (method: string, params?: object) => Promise<Record<string, unknown>>;

/** A DevTools protocol session with a Worker's isolate. */
export interface Inspector {
  /** Sends a command; resolves with its result. */
  send: Send;
  close: () => void;
}

/**
 * Connects a minimal DevTools protocol client to a Worker's `wrangler dev` inspector.
 * Call it before any load (see the top of this file) and keep it until profiling is done.
 *
 * @param inspectorPort - the Worker's `--inspector-port`.
 * @throws when the connection or any later command takes over 30 s.
 */
export async function connectInspector(inspectorPort: number): Promise<Inspector> {
  const url = `ws://${HOST}:${inspectorPort}/ws`;
  // wrangler's inspector proxy wants an Origin it trusts (undici takes headers here).
  const init = { headers: { Origin: 'http://localhost' } } as unknown as string[];
  const socket = new WebSocket(url, init);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`inspector: no connection to ${url} in ${INSPECTOR_TIMEOUT_MS} ms`));
    }, INSPECTOR_TIMEOUT_MS);
    socket.addEventListener('open', () => resolve(clearTimeout(timer)));
    socket.addEventListener('error', () => {
      clearTimeout(timer);
      reject(new Error(`inspector: cannot connect to ${url}`));
    });
  });
  let next = 0;
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: object };
    const resolve = message.id === undefined ? undefined : pending.get(message.id);
    if (resolve === undefined || message.id === undefined) return;
    pending.delete(message.id);
    resolve((message.result ?? {}) as Record<string, unknown>);
  });
  const send: Send = (method, params = {}) => {
    next += 1;
    const id = next;
    socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`inspector: no answer to ${method} in ${INSPECTOR_TIMEOUT_MS} ms`));
      }, INSPECTOR_TIMEOUT_MS);
      pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  };
  return { send, close: () => socket.close() };
}

const isIdle = (node: ProfileNode | undefined) => node?.callFrame.functionName === '(idle)';

/** Each sample's duration in microseconds: the time until the next sample (0 for the last). */
function sampleDurations(profile: Profile): number[] {
  return profile.samples.map((_, index) => profile.timeDeltas[index + 1] ?? 0);
}

// V8's own buckets; every other frame without a script URL is a native function.
const V8_BUCKETS = new Set(['(program)', '(garbage collector)', '(root)', '(idle)']);

/**
 * Self time per function, largest first, as `[label, ms]`; "(idle)" included. Time in an
 * unnamed native function (`console.info`, `fetch`...) is charged to the script function
 * that called it, which says where it came from.
 */
function selfTimes(profile: Profile): [string, number][] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parents.set(child, node.id);
  }
  const charged = (id: number): ProfileNode | undefined => {
    let node = nodes.get(id);
    while (node && node.callFrame.url === '' && !V8_BUCKETS.has(node.callFrame.functionName)) {
      const parent = parents.get(node.id);
      if (parent === undefined) break;
      node = nodes.get(parent);
    }
    return node;
  };
  const durations = sampleDurations(profile);
  const totals = new Map<string, number>();
  profile.samples.forEach((sample, index) => {
    const frame = charged(sample)?.callFrame;
    const label = frame
      ? `${frame.functionName || '(anonymous)'} ${frame.url.split('/').pop() ?? ''}:${frame.lineNumber}`
      : '?';
    totals.set(label, (totals.get(label) ?? 0) + (durations[index] ?? 0) / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

function busyMs(profile: Profile): number {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const durations = sampleDurations(profile);
  let busy = 0;
  profile.samples.forEach((sample, index) => {
    if (!isIdle(nodes.get(sample))) busy += durations[index] ?? 0;
  });
  return busy / 1000;
}

/**
 * Profiles a Worker's isolate while autocannon runs one case for `seconds`.
 *
 * @param inspector - a session opened with {@link connectInspector} before any load.
 * @param name - the case, for error messages.
 * @param wranglerPid - the Worker's wrangler process, leader of its process group.
 * @throws {BenchmarkError} when the case's answers are not all 2xx.
 */
export async function profileLoad(
  inspector: Inspector,
  name: string,
  options: autocannon.Options,
  seconds: number,
  wranglerPid: number | undefined,
): Promise<CpuProfileResult> {
  await inspector.send('Profiler.enable');
  await inspector.send('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  const isolate = wranglerPid === undefined ? undefined : isolateProcess(wranglerPid);
  await inspector.send('Profiler.start');
  const stackBefore = wranglerPid === undefined ? undefined : stackCpuMs(wranglerPid);
  const threadBefore = isolate === undefined ? undefined : threadTime(isolate);
  const load = await runLoad(name, options, seconds);
  const threadAfter = isolate === undefined ? undefined : threadTime(isolate);
  const stackAfter = wranglerPid === undefined ? undefined : stackCpuMs(wranglerPid);
  const { profile } = (await inspector.send('Profiler.stop')) as { profile: Profile };
  const busy = busyMs(profile);
  const perRequest = (ms: number) => ms / load.answered;
  return {
    load,
    profile,
    busyMs: busy,
    cpuMsPerRequest: perRequest(busy),
    thread:
      threadBefore === undefined || threadAfter === undefined
        ? undefined
        : {
            cpuMs: perRequest(threadAfter.cpuMs - threadBefore.cpuMs),
            waitMs: perRequest(threadAfter.waitMs - threadBefore.waitMs),
          },
    stackCpuMsPerRequest:
      stackBefore === undefined || stackAfter === undefined
        ? undefined
        : perRequest(stackAfter - stackBefore),
  };
}

/**
 * Prints where the isolate's time went: the `top` functions by self time, with their
 * share of the profile's busy (non-idle) time.
 */
export function printHotspots(label: string, result: CpuProfileResult, top: number): void {
  console.log(
    `\n${label}: ${result.busyMs.toFixed(0)} ms busy, self time by function (native calls charged to their caller)`,
  );
  console.log('| self ms | share of busy | ms/request | function |\n|---|---|---|---|');
  const rows = selfTimes(result.profile).filter(([label]) => !label.startsWith('(idle)'));
  for (const [function_, ms] of rows.slice(0, top)) {
    const share = ((100 * ms) / result.busyMs).toFixed(1);
    const perRequest = (ms / result.load.answered).toFixed(3);
    console.log(`| ${ms.toFixed(0)} | ${share} % | ${perRequest} | ${function_} |`);
  }
}
