import { expect } from 'vitest';
import { EXPECTED_WALK, lastJsonLine, type RunResult } from '../support/package-consumer.ts';

/** Asserts that a run of the consumer program exited 0, quietly, printing the expected walk. */
export function expectWalk(result: RunResult): void {
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(lastJsonLine(result.stdout)).toEqual(EXPECTED_WALK);
}
