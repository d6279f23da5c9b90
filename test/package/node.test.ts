import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { run } from '../support/package-consumer.ts';
import { expectWalk } from './expect-walk.ts';

// The installed package under Node 22 as ESM and through require(esm), and its
// declarations under tsc as consumers configure it.
describe('package under Node 22', () => {
  const consumer = inject('consumerDir');

  it('should walk when imported as ESM', () => {
    const result = run(
      'node',
      [
        '--input-type=module',
        '-e',
        "import { walk } from './walk.mjs'; console.log(JSON.stringify(await walk()));",
      ],
      consumer,
    );
    expectWalk(result);
  });

  it('should walk when loaded with require', () => {
    const result = run(
      'node',
      ['-e', "require('./walk.cjs').walk().then((r) => console.log(JSON.stringify(r)));"],
      consumer,
    );
    expectWalk(result);
  });
});

const GLOBALS = {
  'node types, no DOM': { lib: ['ES2023'], types: ['node'] },
  'node types and DOM': { lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: ['node'] },
  'workers types': { lib: ['ES2023'], types: ['@cloudflare/workers-types'] },
};
const RESOLUTIONS = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
};

describe('package declarations under tsc', () => {
  const consumer = inject('consumerDir');
  const cases = Object.entries(RESOLUTIONS).flatMap(([resolution, moduleOptions]) =>
    Object.entries(GLOBALS).map(([globals, globalOptions]) => ({
      resolution,
      globals,
      options: { ...moduleOptions, ...globalOptions },
    })),
  );

  it.each(cases)(
    'should type-check strictly with $resolution and $globals',
    ({ resolution, globals, options }) => {
      const config = `tsconfig.${resolution}.${globals.replace(/\W+/g, '-')}.json`;
      const compilerOptions = {
        ...options,
        target: 'ES2023',
        strict: true,
        exactOptionalPropertyTypes: true,
        noPropertyAccessFromIndexSignature: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        noEmit: true,
      };
      const files = ['walk.ts', 'worker.ts', 'size-client.ts', 'size-webhook.ts', 'size-verify.ts'];
      writeFileSync(join(consumer, config), JSON.stringify({ compilerOptions, files }));
      const result = run('tsc', ['-p', config, '--listFiles'], consumer);
      expect(result.stdout).not.toContain('error TS');
      expect(result.stdout).toContain('/node_modules/edgepay/dist/lib/testing/index.d.ts');
      expect(result.status).toBe(0);
    },
  );
});
