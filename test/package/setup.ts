import { readFileSync } from 'node:fs';
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
 * project that every package test reads; both are deleted afterwards. Under
 * `npm run test:all` the runner has packed it already (publint and attw checked that
 * tarball): `EDGEPAY_PACKED` names its description, and it is not packed again.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'edgepay-package-'));
  const packed = process.env.EDGEPAY_PACKED;
  const tarball: PackedTarball =
    packed === undefined ? packPackage(dir) : JSON.parse(readFileSync(packed, 'utf8'));
  project.provide('tarball', tarball);
  project.provide('consumerDir', createConsumer(join(dir, 'consumer'), tarball.path));
  return () => rm(dir, { recursive: true, force: true });
}
