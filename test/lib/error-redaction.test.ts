/**
 * The SDK's errors and hooks mask personal data (email addresses, account numbers) in what
 * they render, while `rawBody` keeps the body as received: against the sandbox over real
 * fetch, whose 404 for an unknown path quotes the path back in its message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENDPOINTS,
  NotFoundError,
  PaymentsClient,
  type PaymentsClientOptions,
  parseWebhookEventUnverified,
  type RequestEvent,
  type ResponseEvent,
  ResponseValidationError,
  TimeoutError,
} from '../../lib/index.ts';
import { type SandboxClient, startSandboxClient } from '../support/sandbox-client.ts';

const EMAIL = 'grace.hopper@example.com';
const ACCOUNT = '0123456789';

let sandbox: SandboxClient;
beforeAll(async () => {
  sandbox = await startSandboxClient();
});
afterAll(() => sandbox.close());

/** A client on the sandbox that records what its hooks and its logger receive. */
function observedClient(options: Partial<PaymentsClientOptions> = {}) {
  const seen = {
    requests: [] as RequestEvent[],
    responses: [] as ResponseEvent[],
    lines: [] as string[],
  };
  const client = new PaymentsClient({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    baseUrl: sandbox.url,
    maxRetries: 0,
    onRequest: (event) => seen.requests.push(event),
    onResponse: (event) => seen.responses.push(event),
    logger: { debug: (message, fields) => seen.lines.push(`${message} ${JSON.stringify(fields)}`) },
    ...options,
  });
  return { client, seen };
}

/** Everything the hooks and the logger received, as text. */
function hookText(seen: ReturnType<typeof observedClient>['seen']): string {
  return [
    ...seen.requests.map((event) => JSON.stringify(event)),
    ...seen.responses.map((event) => `${JSON.stringify(event)} ${event.error?.message ?? ''}`),
    ...seen.lines,
  ].join('\n');
}

describe('redaction of personal data in errors', () => {
  it('should mask an email and an account number in the message, the URL and the hooks, and keep them in rawBody', async () => {
    const { client, seen } = observedClient();
    // An endpoint the sandbox does not route: its 404 message quotes the path back.
    const unknown = {
      ...ENDPOINTS['virtualAccounts.retrieve'],
      path: `/customers/${EMAIL}/${ACCOUNT}`,
    } as const;
    const error = await client.request(unknown).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(NotFoundError);
    const notFound = error as NotFoundError;
    const upstream = JSON.parse(String(notFound.rawBody)) as { message: string };
    expect(upstream.message).toBe(`No route for /customers/${EMAIL}/${ACCOUNT}`);
    expect(notFound.message).toContain('(No route for /customers/[email]/******6789)');
    expect(notFound.url).toBe(`${sandbox.url}/customers/[email]/******6789`);
    for (const text of [
      notFound.message,
      String(notFound.url),
      notFound.stack,
      JSON.stringify(error),
      hookText(seen),
    ]) {
      expect(text).not.toContain(EMAIL);
      expect(text).not.toContain(ACCOUNT);
    }
    expect(seen.requests.map((event) => event.url)).toEqual([
      `${sandbox.url}/customers/[email]/******6789`,
    ]);
    expect(seen.responses.map((event) => [event.url, event.status])).toEqual([
      [`${sandbox.url}/customers/[email]/******6789`, 404],
    ]);
  });

  it('should mask a reference that is an account number or an email in the message and the hook URLs', async () => {
    const { client, seen } = observedClient();
    const byAccount = await client.virtualAccounts
      .retrieve(ACCOUNT)
      .catch((caught: unknown) => caught);
    // The path carries the email percent-encoded: `grace.hopper%40example.com`.
    const byEmail = await client.transfers.verify(EMAIL).catch((caught: unknown) => caught);

    expect(byAccount).toBeInstanceOf(NotFoundError);
    expect(byEmail).toBeInstanceOf(NotFoundError);
    expect((byAccount as Error).message).toMatch(/virtual-accounts\/\*{6}6789 \(/);
    expect((byEmail as Error).message).toMatch(/disbursements\/verify\/\[email\] \(/);
    const text = [(byAccount as Error).message, (byEmail as Error).message, hookText(seen)].join(
      '\n',
    );
    expect(text).not.toContain(ACCOUNT);
    expect(text).not.toContain(encodeURIComponent(EMAIL));
    expect(seen.requests).toHaveLength(2);
  });

  it('should mask a value the validator quotes in the message and the issues, and keep it in rawBody', () => {
    // valibot quotes a value of the wrong type: a reference sent as a 13-digit number.
    const body = JSON.stringify({
      event_type: 'charge_success',
      event_id: 'evt-1',
      timestamp: '2026-01-01T00:00:00Z',
      data: { reference: 1234567890123, amount: 5, currency: 'NGN' },
    });
    const error = (() => {
      try {
        return parseWebhookEventUnverified(body);
      } catch (caught) {
        return caught;
      }
    })();

    expect(error).toBeInstanceOf(ResponseValidationError);
    const invalid = error as ResponseValidationError;
    expect(invalid.issues).toEqual([
      { path: 'data.reference', message: 'Invalid type: Expected string but received ******0123' },
    ]);
    expect(invalid.message).toMatch(/received \*{6}0123$/);
    expect(invalid.rawBody).toBe(body);
    expect(JSON.stringify(error)).not.toContain('1234567890123');
  });

  it('should hand onResponse a failed attempt whose error is masked', async () => {
    // The sandbox holds the request past the attempt's timeout: no response arrives.
    const rule = await sandbox.control('faults/rules', {
      fault: 'delay',
      route: 'GET /virtual-accounts/:account_reference',
      after_ms: 1_000,
    });
    expect(rule.status).toBe(200);
    const { client, seen } = observedClient({ timeoutMs: 100 });
    const error = await client.virtualAccounts.retrieve(ACCOUNT).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(TimeoutError);
    expect(seen.responses).toHaveLength(1);
    const reported = seen.responses[0]?.error;
    expect(reported).toBe(error);
    expect(reported?.message).toMatch(/virtual-accounts\/\*{6}6789$/);
    expect(hookText(seen)).not.toContain(ACCOUNT);
    // Let the held request finish before the sandbox closes.
    expect((await sandbox.control('idle')).status).toBe(200);
  });
});
