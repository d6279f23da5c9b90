import type { TestProject } from 'vitest/node';
import { startSandboxServer } from '../scripts/sandbox-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the sandbox emulator served over real HTTP on 127.0.0.1. */
    sandboxUrl: string;
    /** A second sandbox for tests that inject faults (latency, errors, drops), so they never disturb others. */
    faultSandboxUrl: string;
  }
}

/** Starts the sandbox emulators over HTTP on free loopback ports for the whole run of a project. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startSandboxServer({ port: 0 });
  const faultServer = await startSandboxServer({ port: 0 });
  project.provide('sandboxUrl', server.url);
  project.provide('faultSandboxUrl', faultServer.url);
  return async () => {
    await Promise.all([server.close(), faultServer.close()]);
  };
}
