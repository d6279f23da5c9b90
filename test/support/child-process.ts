/**
 * Child processes of the end-to-end tests: run one to its end with its output collected,
 * or stop one that serves until told to.
 */
import type { ChildProcess } from 'node:child_process';

/** What a finished child printed, and how it ended. */
export interface FinishedChild {
  /** The exit code; `null` when a signal ended it. */
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** It outlived its time and was sent the signal. */
  readonly timedOut: boolean;
}

/**
 * Collects a spawned child's stdout and stderr (piped) until it closes. A child still
 * running after `timeoutMs` is sent `signal`; the close that follows resolves as usual,
 * with `timedOut` set.
 *
 * @param timeoutMs - milliseconds before the signal.
 * @throws whatever the child's `error` event carries (a command that cannot start).
 */
export function untilClosed(
  child: ChildProcess,
  timeoutMs: number,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<FinishedChild> {
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill(signal);
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, timedOut });
    });
  });
}

/** Stops a child with SIGTERM and waits for it to exit; at once when it already has. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** A parsed JSON body, as loosely typed as `Response.json()` gives it: a test reads what it expects. */
type Json = ReturnType<typeof JSON.parse>;

/** An admin API answer: its status and its parsed JSON body (`undefined` when empty, a 204). */
export interface AdminAnswer {
  readonly status: number;
  readonly body: Json;
}

/**
 * One admin API call to a running gateway with the local admin token, whatever its status.
 *
 * @param gatewayUrl - e.g. `http://127.0.0.1:18807`.
 * @param path - the path from the gateway's root, `/admin/...`.
 * @throws Error naming the call, the status and the answer when the answer is not JSON.
 */
export async function adminAnswer(
  gatewayUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<AdminAnswer> {
  const response = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: {
      Authorization: 'Bearer dev-admin-token',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (text === '') return { status: response.status, body: undefined };
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    throw new Error(`${method} ${path}: ${response.status}, not JSON: ${text}`);
  }
}

/**
 * One admin API call to a running gateway with the local admin token: the parsed JSON
 * answer (`undefined` for an empty one, a 204).
 *
 * @param gatewayUrl - e.g. `http://127.0.0.1:18807`.
 * @param path - the path from the gateway's root, `/admin/...`.
 * @throws Error naming the call, the status and the answer when it is not 2xx.
 */
export async function adminCall(
  gatewayUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const answer = await adminAnswer(gatewayUrl, method, path, body);
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body;
}
