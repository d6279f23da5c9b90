/**
 * The operator console's budget, checked here so a size regression fails `npm test`:
 * everything served under /console/ (page, scripts, style sheet) <= 60 KiB gzip -9, as
 * `npm run bench -- console` prints it.
 */
import { describe, expect, it } from 'vitest';
import { CONSOLE_BUDGET, measureConsole } from '../../bench/console-size.ts';

describe('console size', () => {
  it(`should keep the console within ${CONSOLE_BUDGET} bytes gzipped`, async () => {
    const built = await measureConsole();
    expect(built.files.map((file) => file.path)).toContain('console/index.html');
    expect(built.files.some((file) => /^console\/assets\/app-\w+\.js$/.test(file.path))).toBe(true);
    expect(built.gzipped).toBeGreaterThan(0);
    expect(built.gzipped).toBeLessThanOrEqual(CONSOLE_BUDGET);
  });
});
