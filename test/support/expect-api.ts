/**
 * Assertions shared by the sandbox contract tests: the error body with its stable codes
 * (docs/gateway.md), validation issues by path, list pages and webhook signatures.
 */
import { expect } from 'vitest';
import { verifyRequestSignature } from '../../lib/signing.ts';
import { type ApiResponse, type Json, SANDBOX_SECRET } from './sandbox-client.ts';
import type { ReceivedWebhook } from './webhook-receiver.ts';

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

/** Asserts a 2xx response with top-level `status: 'success'`. */
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

/** Asserts that a spec record's `created_at` and `updated_at` are ISO 8601 timestamps. */
export function expectTimestamps(record: Json): void {
  expectIsoTimestamp(record.created_at);
  expectIsoTimestamp(record.updated_at);
}

/**
 * Asserts pages 1 and 2 of a list answered `pageSize` records per page out of `total`.
 *
 * @param first - the page object of page 1 (`res.body`, or `res.body.data` where nested).
 * @param second - the page object of page 2.
 */
export function expectTwoPages(first: Json, second: Json, total: number, pageSize: number): void {
  expect(first).toMatchObject({ total, page: 1, pageSize });
  expect(second).toMatchObject({ total, page: 2, pageSize });
}

/** Asserts a webhook body's envelope (docs/payments-api.md, "Events"): string `status`, `message`, `event_id` and an ISO `timestamp`. */
export function expectWebhookEnvelope(body: Json): void {
  expect(typeof body.status).toBe('string');
  expect(typeof body.message).toBe('string');
  expect(typeof body.event_id).toBe('string');
  expectIsoTimestamp(body.timestamp);
}

/** Asserts that a received webhook carries a valid signature by the merchant secret over its exact body. */
export async function expectSignedWebhook(hook: ReceivedWebhook): Promise<void> {
  await expect(
    verifyRequestSignature({
      secret: SANDBOX_SECRET,
      body: hook.raw,
      headers: hook.headers as Record<string, string>,
    }),
  ).resolves.toBeUndefined();
}
