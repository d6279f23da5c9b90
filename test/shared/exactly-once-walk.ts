// The SDK's timing windows and its fail-closed secrets, walked unchanged in every runtime
// (Node, Deno, Bun) against an in-process sandbox whose fault rules play a provider that
// commits late. Only Web APIs and the package's own code: no test framework, no Node
// built-ins. Each window reports what reached the sandbox, so the runner asserts that a
// money request went out exactly once.
import {
  PaymentsClient,
  type PaymentsClientOptions,
  parseWebhookEvent,
  parseWebhookEventUnverified,
  signRequest,
  verifyRequestSignature,
} from '../../lib/index.ts';
import { createSandbox } from '../../lib/testing/index.ts';

const ORIGIN = 'http://sandbox.test';
const SECRET = 'sandbox-secret';
const TRANSFER_ROUTE = 'POST /disbursements/initialize';

/** What one settle window ended with, as the sandbox saw it. */
interface WindowReport {
  /** What the call answered (`transfer <status> <amount>`) or threw (the error's name). */
  outcome: string;
  /**
   * Each POST of the call as the sandbox's request log shows it once every window has
   * closed: the status answered (`dropped` when the connection was cut) and, for a
   * request processed after it was answered, `committed <status>` of that processing.
   */
  posts: string[];
  /** Whether a lookup answered 404 before the record was found: the SDK waited, not resent. */
  lookedUpBeforeCommit: boolean;
}

/** What the walk found, for the runner to compare with what it expects. */
export interface ExactlyOnceReport {
  timeout: WindowReport;
  dropped: WindowReport;
  serverError: WindowReport;
  duplicateRefused: WindowReport;
  unreadable: WindowReport;
  /** `<error name>: <message>` per missing or empty secret, or `accepted` when one got through. */
  failClosed: Record<string, string>;
  /** The event type the explicitly unverified parse read. */
  unverified: string;
}

interface LogEntry {
  method: string;
  status: number | null;
  fault?: { commit_status?: number | null };
}

const transfer = (reference: string) => ({
  reference,
  amount: 100,
  currency: 'NGN',
  customer_name: 'Grace Hopper',
  customer_email: 'grace@example.com',
  destination_bank_code: '058',
  destination_bank_account: '0123456789',
  destination_bank_name: 'GTBank',
});

/**
 * Walks every window of the SDK's settle rule and every fail-closed secret.
 *
 * @returns what each window and check ended with.
 */
export async function exactlyOnceWalk(): Promise<ExactlyOnceReport> {
  const sandbox = createSandbox();
  const sandboxFetch = (input: RequestInfo | URL, init?: RequestInit) =>
    sandbox.fetch(new Request(input, init));
  const control = async (path: string, body?: unknown) => {
    const response = await sandboxFetch(`${ORIGIN}/__sandbox/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`control ${path} answered ${response.status}`);
    return ((await response.json()) as { data: unknown }).data;
  };
  const id = crypto.randomUUID().slice(0, 8);

  // One window: the rules, then one transfer through a client with `options`; what
  // reached the sandbox is read once every window has closed.
  async function window(
    name: string,
    rules: Record<string, unknown>[],
    options: Partial<PaymentsClientOptions>,
  ): Promise<{ outcome: string; requestId: string }> {
    const reference = `once-${name}-${id}`;
    const requestId = `req-${reference}`;
    for (const rule of rules) await control('faults/rules', { ...rule, reference });
    const client = new PaymentsClient({
      keyId: 'sandbox-key',
      secret: SECRET,
      baseUrl: ORIGIN,
      fetch: sandboxFetch,
      random: () => 0,
      ...options,
    });
    const outcome = await client.transfers.initialize(transfer(reference), { requestId }).then(
      (made) => `transfer ${made.status} ${made.amount}`,
      (error: Error) => error.name,
    );
    return { outcome, requestId };
  }

  const calls = await Promise.all([
    // A 300 ms client timeout; the provider commits 1.5 s after the request arrived.
    window('timeout', [{ fault: 'delay', route: TRANSFER_ROUTE, after_ms: 1500 }], {
      timeoutMs: 300,
    }),
    window('dropped', [{ fault: 'drop_then_commit', route: TRANSFER_ROUTE, after_ms: 1500 }], {}),
    window(
      'server-error',
      [{ fault: 'error_then_commit', route: TRANSFER_ROUTE, status: 503, after_ms: 1500 }],
      {},
    ),
    // Committed at once but unreadable for 1.5 s: the resend after a 1 s window is refused
    // as a duplicate, and the record is looked up again.
    window(
      'duplicate',
      [
        { fault: 'error_then_commit', route: TRANSFER_ROUTE, status: 502, after_ms: 100 },
        { fault: 'visible_after', after_ms: 1500 },
      ],
      { settleMs: 1000 },
    ),
    // Unreadable for longer than both windows: the outcome is unknown, and said so.
    window(
      'unreadable',
      [
        { fault: 'error_then_commit', route: TRANSFER_ROUTE, status: 502, after_ms: 100 },
        { fault: 'visible_after', after_ms: 3000 },
      ],
      { settleMs: 500 },
    ),
  ]);
  // Every deferred commit and read lag over: the log shows how each POST was processed.
  await sandbox.idle();
  const reports: WindowReport[] = [];
  for (const { outcome, requestId } of calls) {
    const log = (await control(`requests?request_id=${requestId}`)) as LogEntry[];
    reports.push({
      outcome,
      posts: log
        .filter((entry) => entry.method === 'POST')
        .map((entry) => {
          const answered = entry.status === null ? 'dropped' : String(entry.status);
          const committed = entry.fault?.commit_status;
          return committed == null ? answered : `${answered}, committed ${committed}`;
        }),
      lookedUpBeforeCommit: log.some((entry) => entry.method === 'GET' && entry.status === 404),
    });
  }
  sandbox.close();
  const [timeout, dropped, serverError, duplicateRefused, unreadable] = reports as [
    WindowReport,
    WindowReport,
    WindowReport,
    WindowReport,
    WindowReport,
  ];
  return {
    timeout,
    dropped,
    serverError,
    duplicateRefused,
    unreadable,
    ...(await failClosed()),
  };
}

// Every way a secret can go missing, through every function that takes one.
async function failClosed(): Promise<Pick<ExactlyOnceReport, 'failClosed' | 'unverified'>> {
  const body = JSON.stringify({
    event_type: 'charge_success',
    event_id: 'evt_walk',
    timestamp: new Date().toISOString(),
    data: { reference: 'pay_walk', amount: 100, currency: 'NGN' },
  });
  const headers = { ...(await signRequest({ keyId: 'sandbox-key', secret: SECRET, body })) };
  const failClosed: Record<string, string> = {};
  const missing: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['empty', ''],
  ];
  const outcome = (run: () => Promise<unknown>) =>
    run().then(
      () => 'accepted',
      (error: Error) => `${error.name}: ${error.message}`,
    );
  for (const [name, secret] of missing) {
    const given = secret as string;
    failClosed[`parseWebhookEvent ${name}`] = await outcome(() =>
      parseWebhookEvent(body, headers, { secret: given }),
    );
    failClosed[`verifyRequestSignature ${name}`] = await outcome(() =>
      verifyRequestSignature({ secret: given, body, headers }),
    );
    failClosed[`PaymentsClient ${name}`] = await outcome(
      async () => new PaymentsClient({ keyId: 'sandbox-key', secret: given, baseUrl: ORIGIN }),
    );
  }
  failClosed['parseWebhookEvent without options'] = await outcome(() =>
    (parseWebhookEvent as (raw: string, headers: object) => Promise<unknown>)(body, headers),
  );
  return { failClosed, unverified: parseWebhookEventUnverified(body).event_type };
}
