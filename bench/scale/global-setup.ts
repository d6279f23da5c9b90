// The set-up of the load model's measuring run (bench/scale/vitest.config.ts): the worker
// tests' own (the sandbox upstream and the delivery receiver, test/global-setup.ts), plus a
// sink on loopback that the measuring file in workerd POSTs its JSON to (workerd writes no
// files); the sink writes it to the file named by SCALE_MEASUREMENTS_FILE.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { TestProject } from 'vitest/node';
import workerSetup from '../../test/global-setup.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the measuring file POSTs its JSON. */
    scaleSinkUrl: string;
    /** The consumer's `max_batch_size` (wrangler.toml): the size of a measured batch. */
    consumerBatchSize: number;
  }
}

/** The sink's port: the range this benchmark's servers keep to. */
const SINK_PORT = 19910;

/** Starts the worker tests' servers and the sink; returns what stops them. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const file = process.env.SCALE_MEASUREMENTS_FILE;
  if (file === undefined || process.env.SCALE_CONSUMER_BATCH === undefined)
    throw new Error(
      'SCALE_MEASUREMENTS_FILE or SCALE_CONSUMER_BATCH is not set (bench/scale.ts sets both)',
    );
  const stopWorkerSetup = await workerSetup(project);
  const sink = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      writeFileSync(file, Buffer.concat(chunks));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    sink.once('error', reject);
    sink.listen(SINK_PORT, '127.0.0.1', resolve);
  });
  project.provide('scaleSinkUrl', `http://127.0.0.1:${SINK_PORT}/measurements`);
  project.provide('consumerBatchSize', Number(process.env.SCALE_CONSUMER_BATCH));
  return async () => {
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    await stopWorkerSetup();
  };
}
