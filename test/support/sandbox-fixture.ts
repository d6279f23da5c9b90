/**
 * Per-scope fixtures for the sandbox contract tests: a sandbox server or a webhook
 * receiver that starts in `beforeAll` and closes in `afterAll` of the calling file or
 * `describe`. Each returns a handle that can be declared at module level; its members
 * reach the running instance, so use them inside hooks and tests only.
 *
 * @example
 * ```ts
 * const hooks = useWebhookReceiver();
 * const api = useSandboxClient(() => ({ webhookUrl: hooks.url }));
 * ```
 */
import { afterAll, beforeAll } from 'vitest';
import { type SandboxClient, startSandboxClient } from './sandbox-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** Options of {@link startSandboxClient}, e.g. `{ webhookUrl }`. */
export type SandboxClientOptions = NonNullable<Parameters<typeof startSandboxClient>[0]>;

/** Starts in `beforeAll` and closes in `afterAll`; `get` throws before the start. */
function useStarted<T extends { close(): Promise<void> }>(
  what: string,
  start: () => Promise<T>,
): () => T {
  let instance: T | undefined;
  beforeAll(async () => {
    instance = await start();
  });
  afterAll(async () => {
    await instance?.close();
    instance = undefined;
  });
  return () => {
    if (instance === undefined) throw new Error(`${what} runs only inside hooks and tests`);
    return instance;
  };
}

/**
 * A sandbox server (on a free loopback port) for the calling scope.
 *
 * @param options - sandbox options, or a function read in `beforeAll` (for values
 *   that exist only then, such as a receiver's URL). @default {}
 * @returns a client whose calls go to the running sandbox.
 */
export function useSandboxClient(
  options: SandboxClientOptions | (() => SandboxClientOptions) = {},
): SandboxClient {
  const current = useStarted('the sandbox client', () =>
    startSandboxClient(typeof options === 'function' ? options() : options),
  );
  return {
    get url() {
      return current().url;
    },
    get server() {
      return current().server;
    },
    call: (...args) => current().call(...args),
    control: (...args) => current().control(...args),
    state: () => current().state(),
    balanceMinor: () => current().balanceMinor(),
    advance: (seconds) => current().advance(seconds),
    settle: () => current().settle(),
    tick: () => current().tick(),
    reset: () => current().reset(),
    webhooks: () => current().webhooks(),
    complete: (...args) => current().complete(...args),
    close: () => current().close(),
  };
}

/**
 * A webhook receiver (on a free loopback port) for the calling scope.
 *
 * @returns a receiver whose members read the running one; `respondWith` can be set.
 */
export function useWebhookReceiver(): WebhookReceiver {
  const current = useStarted('the webhook receiver', startWebhookReceiver);
  return {
    get url() {
      return current().url;
    },
    get received() {
      return current().received;
    },
    get respondWith() {
      return current().respondWith;
    },
    set respondWith(status: number) {
      current().respondWith = status;
    },
    waitFor: (...args) => current().waitFor(...args),
    close: () => current().close(),
  };
}
