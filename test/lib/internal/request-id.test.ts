/**
 * lib/internal/request-id.ts, the one request id rule of the SDK, the sandbox and the
 * gateway (the last two compared over HTTP in test/worker/shared-rules.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { PaymentsClient, type RequestEvent } from '../../../lib/index.ts';
import {
  MAX_REQUEST_ID_LENGTH,
  newRequestId,
  REQUEST_ID_HEADER,
  resolveRequestId,
} from '../../../lib/internal/request-id.ts';
import { createSandbox } from '../../../lib/testing/index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withId = (id: string) => new Headers({ [REQUEST_ID_HEADER]: id });

describe('request id', () => {
  describe('resolveRequestId', () => {
    it.each([
      ['one character', '!'],
      ['128 visible ASCII characters', `~${'a'.repeat(MAX_REQUEST_ID_LENGTH - 1)}`],
      ['punctuation', 'caller:42/ABC_def.9~x'],
    ])('should keep an id of %s', (_, id) => {
      expect(resolveRequestId(withId(id))).toBe(id);
    });

    it.each([
      ['129 characters', 'a'.repeat(MAX_REQUEST_ID_LENGTH + 1)],
      ['a space', 'abc def'],
      ['a tab', 'abc\tdef'],
      ['a non-ASCII character', 'abc-é'],
      ['nothing', ''],
    ])('should replace an id with %s by a new UUID', (_, id) => {
      expect(resolveRequestId(withId(id))).toMatch(UUID);
    });

    it('should generate a new UUID when there is no header', () => {
      const first = resolveRequestId(new Headers());
      expect(first).toMatch(UUID);
      expect(resolveRequestId(new Headers())).not.toBe(first);
    });
  });

  describe('newRequestId', () => {
    it('should be a fresh UUID each time', () => {
      expect(newRequestId()).toMatch(UUID);
      expect(newRequestId()).not.toBe(newRequestId());
    });
  });

  describe('the SDK and the sandbox', () => {
    it('should send a UUID the sandbox keeps and answers with', async () => {
      const sandbox = createSandbox();
      const requests: RequestEvent[] = [];
      const client = new PaymentsClient({
        keyId: 'sandbox-key',
        secret: 'sandbox-secret',
        baseUrl: 'http://sandbox.test',
        fetch: (input, init) => sandbox.fetch(new Request(input, init)),
        onRequest: (event) => requests.push(event),
      });
      await client.banks.list();
      const sent = requests[0]?.requestId ?? '';
      expect(sent).toMatch(UUID);
      const log = await sandbox.fetch(
        new Request(`http://sandbox.test/__sandbox/requests?request_id=${sent}`),
      );
      const { data } = (await log.json()) as { data: { request_id: string }[] };
      expect(data.map((entry) => entry.request_id)).toEqual([sent]);
    });
  });
});
