/**
 * An in-process sandbox (`createSandbox().fetch`, real clock) for the timing fault tests,
 * with signed calls and the `/__sandbox/` controls.
 */
import { signRequest } from '../../../lib/signing.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../../lib/testing/index.ts';
import type { Json } from '../../support/sandbox-client.ts';

/** One in-process answer. */
interface Answer {
  status: number;
  body: Json;
}

/** An in-process sandbox and the calls the tests make on it. */
export interface InProcess {
  sandbox: Sandbox;
  /** A signed API call; rejects with `ConnectionDroppedError` when the fault drops it. */
  call(
    method: string,
    path: string,
    body?: unknown,
    init?: { requestId?: string },
  ): Promise<Answer>;
  /** An unsigned call to `/__sandbox/<path>`: POST with a JSON body when given, else GET. */
  control(path: string, body?: unknown): Promise<Answer>;
  /** Adds a fault rule; throws unless it is accepted. */
  rule(rule: Record<string, unknown>): Promise<Json>;
  /** The request log entries whose body or path names `reference`. */
  requestsFor(reference: string): Promise<Json[]>;
}

/**
 * Creates an in-process sandbox on the real clock (the timing faults run on real timers).
 * Call `sandbox.close()` when done.
 */
export function inProcess(options: SandboxOptions = {}): InProcess {
  const sandbox = createSandbox(options);
  const read = async (response: Response): Promise<Answer> => {
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  const control: InProcess['control'] = async (path, body) =>
    read(
      await sandbox.fetch(
        new Request(`http://sandbox.test/__sandbox/${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      ),
    );
  return {
    sandbox,
    control,
    async call(method, path, body, init = {}) {
      const raw = body === undefined ? '' : JSON.stringify(body);
      const signature = await signRequest({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        body: raw,
      });
      const headers: Record<string, string> = { ...signature };
      if (raw !== '') headers['Content-Type'] = 'application/json';
      if (init.requestId !== undefined) headers['X-Request-Id'] = init.requestId;
      return read(
        await sandbox.fetch(
          new Request(`http://sandbox.test${path}`, {
            method,
            headers,
            ...(raw === '' ? {} : { body: raw }),
          }),
        ),
      );
    },
    async rule(rule) {
      const res = await control('faults/rules', rule);
      if (res.status !== 200) throw new Error(`rule refused: ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    async requestsFor(reference) {
      const log = (await control('requests')).body.data as Json[];
      return log.filter(
        (entry) => entry.path.includes(reference) || entry.body.includes(`"${reference}"`),
      );
    },
  };
}
