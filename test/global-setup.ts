import type { TestProject } from 'vitest/node';
import { startSandboxServer } from '../cli/sandbox-server.ts';
import { startDeliveryReceiver } from './support/delivery-receiver.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the sandbox emulator served over real HTTP on 127.0.0.1. */
    sandboxUrl: string;
    /** A second sandbox for tests that inject faults (latency, errors, drops), so they never disturb others. */
    faultSandboxUrl: string;
    /**
     * A third sandbox whose clock the money-event tests advance (settling transfers,
     * refunds and debits), so no other test sees its items settle early.
     */
    confirmSandboxUrl: string;
    /**
     * A fourth sandbox, the upstream of the fuzz tests: at the full count they create
     * thousands of transfers and would drain the shared sandbox's balance for other tests.
     */
    fuzzSandboxUrl: string;
    /** A recording webhook receiver for the relay's delivery tests (test/support/delivery-receiver.ts). */
    receiverUrl: string;
  }
}

/**
 * Starts the sandbox emulators over HTTP, and the delivery receiver, on free loopback
 * ports for the whole run of a project.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startSandboxServer({ port: 0 });
  const faultServer = await startSandboxServer({ port: 0 });
  const confirmServer = await startSandboxServer({ port: 0 });
  const fuzzServer = await startSandboxServer({ port: 0 });
  const receiver = await startDeliveryReceiver();
  project.provide('sandboxUrl', server.url);
  project.provide('faultSandboxUrl', faultServer.url);
  project.provide('confirmSandboxUrl', confirmServer.url);
  project.provide('fuzzSandboxUrl', fuzzServer.url);
  project.provide('receiverUrl', receiver.url);
  return async () => {
    await Promise.all([
      server.close(),
      faultServer.close(),
      confirmServer.close(),
      fuzzServer.close(),
      receiver.close(),
    ]);
  };
}
