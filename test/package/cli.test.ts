import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PaymentsClient } from '../../lib/index.ts';
import { type RunningCli, startCommand } from '../support/cli-process.ts';

// The sandbox command as a merchant's test suite in another language meets it: installed
// from the tarball into a fresh project and started through npx, nothing built from source.
describe('the edgepay command from the tarball', () => {
  const consumer = inject('consumerDir');
  const running: RunningCli[] = [];
  afterEach(async () => {
    for (const cli of running.splice(0)) await cli.stop('SIGINT');
  });

  it('should start through the installed bin and print its address and credentials', async () => {
    const cli = await startCommand(
      join(consumer, 'node_modules', '.bin', 'edgepay'),
      ['sandbox', '--port', '0', '--host', '127.0.0.1'],
      consumer,
    );
    running.push(cli);
    expect(cli.stdout()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(cli.stdout()).toContain('key id:   sandbox-key\n');
  });

  it('should serve GET /banks and signed calls when started with npx', async () => {
    // npx finds the project's own bin offline; it runs in a process group of its own, which
    // the test signals whole (npx does not pass every signal on to the command).
    const cli = await startCommand(
      'npx',
      ['--no-install', 'edgepay', 'sandbox', '--port', '0'],
      consumer,
      { group: true },
    );
    running.push(cli);
    const banks = await fetch(`${cli.url}/banks`);
    expect(banks.status).toBe(200);
    expect(((await banks.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    const client = new PaymentsClient({
      keyId: 'sandbox-key',
      secret: 'sandbox-secret',
      baseUrl: cli.url,
    });
    const session = await client.payments.initialize({
      email: 'ada@example.com',
      amount: '2500.00',
      currency: 'NGN',
    });
    expect(session.authorization_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const forged = new PaymentsClient({ keyId: 'sandbox-key', secret: 'wrong', baseUrl: cli.url });
    await expect(
      forged.banks.resolve({ bank: '058', account: '0123456789', currency: 'NGN' }),
    ).rejects.toMatchObject({ status: 401 });
  });
});
