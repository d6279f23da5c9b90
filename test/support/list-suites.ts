/**
 * Test factories shared by the list endpoints of the sandbox contract tests (`page`
 * from 1, `page_size` 1..100; docs/payments-api.md, "Limits").
 */
import { it } from 'vitest';
import { expectValidation } from './expect-api.ts';
import type { ApiResponse } from './sandbox-client.ts';

/** A paging query parameter and a value the list must reject. */
export type BadPaging = [name: 'page' | 'page_size', value: string];

/**
 * Registers the query validation tests of a list endpoint: one per bad paging case
 * (`?<name>=<value>` answers 400 with an issue at `name`), then one for an unknown
 * `status` (400 with an issue at `status`).
 *
 * @param list - sends the list request with a query string such as `?page=0`.
 * @param bad - the rejected paging cases, and a status value the endpoint does not know.
 */
export function itRejectsBadListQuery(
  list: (query: string) => Promise<ApiResponse>,
  bad: { paging: BadPaging[]; status: string },
): void {
  it.each(bad.paging)('should reject %s=%s with 400 naming the parameter', async (name, value) => {
    expectValidation(await list(`?${name}=${value}`), [name]);
  });

  it('should reject an unknown status with 400 naming status', async () => {
    expectValidation(await list(`?status=${bad.status}`), ['status']);
  });
}
