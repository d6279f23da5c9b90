import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createConsumer, type PackedTarball, packPackage } from '../support/package-consumer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The tarball `npm pack` made of the repository (built first by `prepack`). */
    tarball: PackedTarball;
    /** A fresh project that installed the tarball, with the consumer program in it. */
    consumerDir: string;
  }
}

/**
 * Packs the package once for the whole project and installs it into one fresh consumer
 * project that every package test reads; both are deleted afterwards.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'edgepay-package-'));
  const tarball = packPackage(dir);
  project.provide('tarball', tarball);
  project.provide('consumerDir', createConsumer(join(dir, 'consumer'), tarball.path));
  return () => rm(dir, { recursive: true, force: true });
}
