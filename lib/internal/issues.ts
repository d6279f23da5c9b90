import * as v from 'valibot';
import type { ErrorContext, Issue, PaymentsError } from '../errors.ts';

/**
 * Flattens valibot issues to `{ path, message }` with dot paths (`data.amount`,
 * `items.0.code`); the root is the empty path.
 */
export function toIssues(issues: readonly v.BaseIssue<unknown>[]): Issue[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message }));
}

/** An error class that carries the issues it lists (RequestValidationError, ResponseValidationError). */
type IssuesErrorClass = new (
  message: string,
  issues: Issue[],
  context?: ErrorContext,
) => PaymentsError;

/** A value built only when it is needed: an error's text and context, on the failing path. */
type Lazy<T> = T | (() => T);

const force = <T>(value: Lazy<T>): T =>
  typeof value === 'function' ? (value as () => T)() : value;

/**
 * Parses `value` with `schema`, or throws `Failure` listing every issue:
 * `${prefix}: amount: Invalid type...; (root): ...`.
 *
 * @param prefix - the message's start, or a function building it (called only on failure).
 * @param context - the error's context, or a function building it (called only on failure).
 * @returns the schema's output.
 * @throws {RequestValidationError | ResponseValidationError} as `Failure` says, with `context`.
 */
export function parseOrThrow<T extends v.GenericSchema>(
  schema: T,
  value: unknown,
  Failure: IssuesErrorClass,
  prefix: Lazy<string>,
  context?: Lazy<ErrorContext>,
): v.InferOutput<T> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  const issues = toIssues(result.issues);
  const listed = issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ');
  throw new Failure(
    `${force(prefix)}: ${listed}`,
    issues,
    context === undefined ? undefined : force(context),
  );
}
