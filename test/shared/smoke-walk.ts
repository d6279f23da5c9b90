// One smoke walk of the SDK against the sandbox, run unchanged in every runtime
// (Node, workerd, Deno, Bun): a payment, a transfer, a refund and a mandate with a debit.
// Only Web APIs and the package's own code: no test framework, no Node built-ins.
import { PaymentsClient } from '../../lib/index.ts';
import { createSandbox } from '../../lib/testing/index.ts';

/** What the walk needs: a client, and the sandbox's unsigned controls. */
export interface SmokeTarget {
  client: PaymentsClient;
  /** POSTs JSON to `/__sandbox/<path>` and returns the parsed answer. */
  control(path: string, body?: unknown): Promise<unknown>;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`smoke walk: ${message}`);
}

/**
 * A client talking to an in-process sandbox through the sandbox's fetch handler: both
 * the SDK and the emulator run in the runtime under test.
 */
export function inProcessTarget(): SmokeTarget {
  const sandbox = createSandbox();
  const origin = 'http://sandbox.test';
  const sandboxFetch = (input: RequestInfo | URL, init?: RequestInit) =>
    sandbox.fetch(new Request(input, init));
  return {
    client: new PaymentsClient({
      keyId: 'sandbox-key',
      secret: 'sandbox-secret',
      baseUrl: origin,
      fetch: sandboxFetch,
    }),
    async control(path, body = {}) {
      const response = await sandboxFetch(`${origin}/__sandbox/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      check(response.ok, `control ${path} answered ${response.status}`);
      return response.json();
    },
  };
}

const day = (iso: string, offsetDays: number) =>
  new Date(Date.parse(iso) + offsetDays * 86_400_000).toISOString().slice(0, 10);

/**
 * Walks a payment, a transfer, a refund and a mandate with a debit through the SDK.
 *
 * @returns the names of the steps that passed, in order.
 * @throws {Error} naming the first step that did not behave.
 */
export async function smokeWalk({ client, control }: SmokeTarget): Promise<string[]> {
  const steps: string[] = [];
  const id = crypto.randomUUID().slice(0, 8);

  const session = await client.payments.initialize({
    email: 'ada@example.com',
    amount: '1000.00',
    currency: 'NGN',
  });
  await control(`payments/${session.reference}/complete`, { outcome: 'success' });
  const payment = await client.payments.verify(session.reference);
  check(payment.status === 'success' && payment.amount === 1000, `payment is ${payment.status}`);
  steps.push('payment');

  const transfer = await client.transfers.initialize({
    reference: `smoke-tr-${id}`,
    amount: 250.5,
    currency: 'NGN',
    customer_name: 'Grace Hopper',
    customer_email: 'grace@example.com',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  });
  check(transfer.status === 'processing', `new transfer is ${transfer.status}`);
  await control('clock/advance', { seconds: 6 });
  const settled = await client.transfers.waitForFinal(transfer.reference, {
    intervalMs: 10,
    timeoutMs: 5_000,
  });
  check(settled.status === 'success', `settled transfer is ${settled.status}`);
  steps.push('transfer');

  const refund = await client.refunds.initialize({
    payment_reference: session.reference,
    refund_reference: `smoke-rf-${id}`,
    currency: 'NGN',
    amount: '400.00',
  });
  check(refund.status === 'processing', `new refund is ${refund.status}`);
  await control('clock/advance', { seconds: 6 });
  check(
    (await client.refunds.retrieve(refund.refund_reference)).status === 'success',
    'refund did not settle',
  );
  steps.push('refund');

  const now = ((await control('clock/advance', { seconds: 0 })) as { data: { now: string } }).data
    .now;
  const mandate = await client.directDebits.createMandate({
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    account_number: '0123456789',
    bank_code: '058',
    start_date: day(now, 1),
    end_date: day(now, 40),
    monthly_amount: 5000,
    monthly_debit_count: 2,
  });
  const challenge = await client.directDebits.initiateActivation(mandate.mandate_reference);
  const active = await client.directDebits.validateActivation(mandate.mandate_reference, {
    param1: challenge.param1,
    value1: '123456',
    param2: challenge.param2,
    value2: '1234',
  });
  check(active.status === 'active', `mandate is ${active.status}`);
  await control('clock/advance', { seconds: 86_400 });
  const debit = await client.directDebits.debit({
    mandate_reference: mandate.mandate_reference,
    debit_amount: 1500,
    narration: 'Smoke',
    customer_email: 'ada@example.com',
    payment_reference: `smoke-dd-${id}`,
  });
  await control('clock/advance', { seconds: 6 });
  const collected = await client.directDebits.debitStatus(debit.payment_reference);
  check(collected.status === 'success', `debit is ${collected.status}`);
  steps.push('mandate');
  return steps;
}
