import * as v from 'valibot';
import type { Issue } from '../errors.ts';

/**
 * Flattens valibot issues to `{ path, message }` with dot paths (`data.amount`,
 * `items.0.code`); the root is the empty path.
 */
export function toIssues(issues: readonly v.BaseIssue<unknown>[]): Issue[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message }));
}
