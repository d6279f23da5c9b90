// Placeholder: the sandbox emulator is being written (issue 2, section 3).

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  keyId?: string;
  secret?: string;
  webhookUrl?: string;
}

/** A sandbox emulator: a plain fetch handler with state. */
export interface Sandbox {
  fetch(request: Request): Promise<Response>;
  tick(): Promise<void>;
}

/** Creates a sandbox emulator. */
export function createSandbox(_options: SandboxOptions = {}): Sandbox {
  return {
    fetch: async () => new Response('{}', { status: 404 }),
    tick: async () => {},
  };
}

/** Rejection of `Sandbox.fetch` when fault injection drops the connection. */
export class ConnectionDroppedError extends TypeError {
  override name = 'ConnectionDroppedError';
}
