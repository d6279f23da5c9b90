/**
 * Assertions shared by the sandbox contract tests: the error body of DESIGN 4.4 with
 * the stable codes of DESIGN 4.5, and validation issues by path.
 */
import { expect } from 'vitest';
import type { ApiResponse, Json } from './sandbox-client.ts';

/**
 * Asserts an error response: HTTP `status`, body `{ status: 'error', message, code,
 * request_id }` and, when given, the exact message.
 */
export function expectError(
  res: ApiResponse,
  status: number,
  code: string,
  message?: string,
): void {
  expect({ status: res.status, code: res.body?.code }, res.text).toEqual({ status, code });
  expect(res.body.status).toBe('error');
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(0);
  expect(typeof res.body.request_id).toBe('string');
  expect(res.body.request_id.length).toBeGreaterThan(0);
  if (message !== undefined) expect(res.body.message).toBe(message);
}

/**
 * Asserts a 400 `validation_failed` whose issues name every one of `paths` (dot paths,
 * e.g. `amount`); each issue carries a non-empty message.
 */
export function expectValidation(res: ApiResponse, paths: string[]): void {
  expectError(res, 400, 'validation_failed');
  const issues: Json[] = res.body.issues;
  expect(Array.isArray(issues), res.text).toBe(true);
  for (const issue of issues) {
    expect(typeof issue.path).toBe('string');
    expect(typeof issue.message).toBe('string');
    expect(issue.message.length).toBeGreaterThan(0);
  }
  expect(issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(paths));
}

/** Asserts a 2xx answer with top-level `status: 'success'`. */
export function expectSuccess(res: ApiResponse, httpStatus = 200): void {
  expect({ status: res.status, body: res.body?.status }, res.text).toEqual({
    status: httpStatus,
    body: 'success',
  });
}

/** Asserts that `value` is an ISO 8601 timestamp string. */
export function expectIsoTimestamp(value: unknown): void {
  expect(typeof value).toBe('string');
  expect(value as string).toMatch(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  );
  expect(Number.isNaN(Date.parse(value as string))).toBe(false);
}
