import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ConnectionDroppedError,
  createSandbox,
  type Sandbox,
  type SandboxOptions,
} from '../lib/testing/index.ts';

/** Port of {@link startSandboxServer} when none is given (the sandbox's port under `npm start`). */
export const DEFAULT_SANDBOX_PORT = 8788;
/** Interface of {@link startSandboxServer} when none is given: loopback only. */
export const DEFAULT_SANDBOX_HOST = '127.0.0.1';

/** Options of {@link startSandboxServer}. */
export interface SandboxServerOptions extends SandboxOptions {
  /** TCP port; `0` picks a free one. @default 8788 */
  port?: number;
  /** Interface to listen on; loopback only by default. @default '127.0.0.1' */
  host?: string;
  /** How often processing items are settled in the background, in milliseconds. @default 250 */
  tickMs?: number;
}

/** A running sandbox server. */
export interface SandboxServer {
  /** Base URL, e.g. `http://127.0.0.1:8788`. */
  url: string;
  sandbox: Sandbox;
  close(): Promise<void>;
}

/**
 * Serves the sandbox emulator (`edgepay/testing`) over HTTP with Node's `http` module,
 * so `npm start`, `edgepay sandbox`, the tests and curl reach it at a real address. Settlement runs on a
 * timer, so processing items settle (and emit their webhooks) without a request.
 *
 * @throws when the port is taken.
 */
export async function startSandboxServer(
  options: SandboxServerOptions = {},
): Promise<SandboxServer> {
  const {
    port = DEFAULT_SANDBOX_PORT,
    host = DEFAULT_SANDBOX_HOST,
    tickMs = 250,
    ...sandboxOptions
  } = options;
  const sandbox = createSandbox(sandboxOptions);
  const server = createServer((req, res) => {
    handle(sandbox, req, res).catch((error: unknown) => {
      console.error('sandbox: unhandled error', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"status":"error","message":"Internal error","code":"internal_error"}');
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const timer = setInterval(() => {
    sandbox.tick().catch((error: unknown) => console.error('sandbox: tick failed', error));
  }, tickMs);
  timer.unref();
  // An IPv6 address is bracketed in a URL (`http://[::1]:8788`).
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${address.port}`,
    sandbox,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        // Pending deferred commits and webhook retries die with the server.
        sandbox.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(sandbox: Sandbox, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
  const request = new Request(new URL(req.url ?? '/', origin), {
    method: req.method ?? 'GET',
    headers,
    ...(body !== undefined && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
  });
  let response: Response;
  try {
    response = await sandbox.fetch(request);
  } catch (error) {
    if (error instanceof ConnectionDroppedError) {
      // Fault injection: the request was processed, or will be (drop_then_commit), but the
      // caller never sees a response.
      req.socket.destroy();
      return;
    }
    throw error;
  }
  const outgoing: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    outgoing[name] = value;
  });
  res.writeHead(response.status, outgoing);
  res.end(Buffer.from(await response.arrayBuffer()));
}
