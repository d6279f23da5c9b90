import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentsClient, type RequestEvent, type ResponseEvent } from '../../lib/index.ts';
import { type SandboxClient, startSandboxClient, uniqueRef } from '../support/sandbox-client.ts';

let sandbox: SandboxClient;
beforeAll(async () => {
  sandbox = await startSandboxClient();
});
afterAll(() => sandbox.close());

describe('PaymentsClient observability', () => {
  it('should report every attempt to onRequest and onResponse', async () => {
    const requests: RequestEvent[] = [];
    const responses: ResponseEvent[] = [];
    const client = new PaymentsClient({
      keyId: 'sandbox-key',
      secret: 'sandbox-secret',
      baseUrl: sandbox.url,
      onRequest: (event) => requests.push(event),
      onResponse: (event) => responses.push(event),
    });
    await client.banks.list();
    await client.transfers.verify('no-such-transfer').catch(() => undefined);
    expect(requests.map((r) => [r.method, new URL(r.url).pathname, r.attempt])).toEqual([
      ['GET', '/banks', 1],
      ['GET', '/disbursements/verify/no-such-transfer', 1],
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 404]);
    for (const [i, response] of responses.entries()) {
      expect(response.requestId).toBe(requests[i]?.requestId);
      expect(response.elapsedMs).toBeGreaterThanOrEqual(0);
    }
    // The request id the SDK sent is the one the sandbox saw.
    const log = await fetch(
      `${sandbox.url}/__sandbox/requests?request_id=${requests[0]?.requestId}`,
    );
    const { data } = (await log.json()) as { data: { path: string }[] };
    expect(data.map((entry) => entry.path)).toEqual(['/banks']);
  });

  it('should log nothing secret: no secret, signature or account number', async () => {
    const lines: string[] = [];
    const secret = 'sandbox-secret';
    const client = new PaymentsClient({
      keyId: 'sandbox-key',
      secret,
      baseUrl: sandbox.url,
      logger: { debug: (message, fields) => lines.push(`${message} ${JSON.stringify(fields)}`) },
    });
    const reference = uniqueRef('log');
    await client.transfers.initialize({
      reference,
      amount: 10,
      currency: 'NGN',
      customer_name: 'Grace Hopper',
      customer_email: 'grace@example.com',
      destination_bank_code: '058',
      destination_bank_account: '0123456789',
      destination_bank_name: 'GTBank',
    });
    await client.banks.resolve({ bank: '058', account: '0123456789', currency: 'NGN' });
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain('edgepay request');
    const everything = lines.join('\n');
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('0123456789');
    expect(everything).not.toMatch(/[0-9a-f]{64}/);
  });
});
