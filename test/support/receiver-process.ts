/**
 * The example receivers (examples/receiver: server.ts under Node, receiver.py under
 * Python) as real child processes, started the way their usage lines say: the secret in
 * `EDGEPAY_RECEIVER_SECRET`, the port in `EDGEPAY_RECEIVER_PORT`, always on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopChild } from './child-process.ts';

const root = join(import.meta.dirname, '..', '..');
const READY_TIMEOUT_MS = 20_000;
/** The most of a receiver's output kept (its tail). */
const MAX_OUTPUT_CHARS = 200_000;

/** A receiver language and how to run it. */
interface ReceiverCommand {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

/** The receivers whose toolchain exists here (Node and Python); main.go has none. */
export const RECEIVER_COMMANDS: readonly ReceiverCommand[] = [
  {
    name: 'TypeScript',
    // The Node running vitest: the project's Node 22, which strips the types.
    command: process.execPath,
    args: [join(root, 'examples', 'receiver', 'server.ts')],
  },
  { name: 'Python', command: 'python3', args: [join(root, 'examples', 'receiver', 'receiver.py')] },
];

/** A running receiver. */
export interface ReceiverProcess {
  /** `http://127.0.0.1:<port>/`, as it printed. */
  readonly url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, awaited. */
  stop(): Promise<void>;
}

/**
 * Starts a receiver and waits for its `receiver: listening on <url>` line.
 *
 * @param receiver - which one.
 * @param secret - the subscription's `whsec_` secret.
 * @param port - its loopback port.
 * @throws with its output when it exits or prints nothing within 20 s (it is stopped then).
 */
export async function startReceiverProcess(
  receiver: ReceiverCommand,
  secret: string,
  port: number,
): Promise<ReceiverProcess> {
  const child = spawn(receiver.command, [...receiver.args], {
    cwd: root,
    env: {
      ...process.env,
      EDGEPAY_RECEIVER_SECRET: secret,
      EDGEPAY_RECEIVER_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = () => stopChild(child);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${receiver.name} receiver not listening:\n${output}`)),
      READY_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-MAX_OUTPUT_CHARS);
      const listening = /receiver: listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (listening?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${receiver.name} receiver exited with ${code}:\n${output}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, output: () => output, stop };
}
