/**
 * The order files start in: vitest's own (by group, then project name, then longest or
 * largest first), except that the worker project goes first in its group and, within it, its
 * property tests (`fuzz-*.test.ts`) before everything else. At the full tier's 10,000 cases those
 * are the longest files by minutes; started last (the worker project comes after lib and tools by
 * name, and on a fresh clone vitest knows sizes, not durations), they ran alone at the end of
 * the run for ten minutes.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const PROPERTY_TEST = /\/fuzz-[^/]+\.test\.ts$/;

/** Lower starts earlier. */
function rank(file: TestSpecification): number {
  if (file.project.name !== 'worker') return 2;
  return PROPERTY_TEST.test(file.moduleId) ? 0 : 1;
}

/** vitest's sequencer with the worker project's property tests moved to the front. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const position = new Map(sorted.map((file, index) => [file, index]));
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    return [...sorted].sort(
      (a, b) =>
        group(a) - group(b) || rank(a) - rank(b) || (position.get(a) ?? 0) - (position.get(b) ?? 0),
    );
  }
}
