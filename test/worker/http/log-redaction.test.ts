/**
 * The gateway's log lines mask personal data with the SDK's rule (lib/shared.ts): email
 * addresses as well as account numbers, in every string field but the request id.
 */
import { describe, expect, it } from 'vitest';
import { logEvent } from '../../../worker/http/log.ts';
import { useCapturedLogs } from '../helpers.ts';

const logs = useCapturedLogs();

describe('logEvent redaction', () => {
  it('should mask email addresses and account numbers in every string field but the request id', () => {
    logEvent('warn', 'server_error', {
      request_id: 'grace@example.com',
      detail: 'upstream: no account 0123456789 for grace@example.com',
      cause_message: 'GET /payments/verify/grace%40example.com failed',
      status: 502,
    });
    expect(logs.lines()).toEqual([
      {
        level: 'warn',
        event: 'server_error',
        request_id: 'grace@example.com',
        detail: 'upstream: no account ******6789 for [email]',
        cause_message: 'GET /payments/verify/[email] failed',
        status: 502,
      },
    ]);
  });
});
