/**
 * Where a client sends its requests, and what it says when nothing answers there: the one
 * named environment is `local` (the emulator on 127.0.0.1:8788), any other name is refused
 * at construction, and a connection failure names the address and where it came from.
 */
import { createServer } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import {
  ConnectionError,
  ENVIRONMENTS,
  PaymentsClient,
  type PaymentsClientOptions,
  type RequestEvent,
} from '../../lib/index.ts';

const CREDENTIALS = { keyId: 'sandbox-key', secret: 'sandbox-secret' };

/** A loopback port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Real fetch over HTTP, with the local environment's address moved to `target`: what the
 * client believes it called stays `http://127.0.0.1:8788`, so a developer's own `npm start`
 * on that port never meets the test.
 */
function movedLocal(target: string): typeof fetch {
  return (input, init) => fetch(String(input).replace(ENVIRONMENTS.local, target), init);
}

async function failure(options: PaymentsClientOptions, reference = 'payout-1'): Promise<unknown> {
  return new PaymentsClient({ ...CREDENTIALS, maxRetries: 0, ...options }).transfers
    .verify(reference)
    .catch((error: unknown) => error);
}

describe('PaymentsClient', () => {
  describe('environment', () => {
    it("should name the local emulator 'local' at http://127.0.0.1:8788", () => {
      expect(ENVIRONMENTS).toEqual({ local: 'http://127.0.0.1:8788' });
    });

    it("should send environment 'local' to http://127.0.0.1:8788", async () => {
      const requests: RequestEvent[] = [];
      const client = new PaymentsClient({
        ...CREDENTIALS,
        environment: 'local',
        fetch: movedLocal(inject('sandboxUrl')),
        onRequest: (event) => requests.push(event),
      });
      const banks = await client.banks.list();
      expect(banks.length).toBeGreaterThan(0);
      expect(requests.map((event) => event.url)).toEqual([
        'http://127.0.0.1:8788/banks?country_code=NG',
      ]);
    });

    it("should refuse 'sandbox' rather than send it to this machine, naming 'local' and baseUrl", () => {
      // A type error too (tsc checks this file): plain JavaScript reaches the runtime check.
      // @ts-expect-error 'sandbox' is not an environment
      const options: PaymentsClientOptions = { ...CREDENTIALS, environment: 'sandbox' };
      expect(() => new PaymentsClient(options)).toThrow(
        new TypeError(
          "Unknown environment 'sandbox': use 'local' (http://127.0.0.1:8788) or baseUrl",
        ),
      );
    });

    it('should refuse a name that is only an inherited property', () => {
      const options = {
        ...CREDENTIALS,
        environment: 'toString',
      } as unknown as PaymentsClientOptions;
      expect(() => new PaymentsClient(options)).toThrow(/Unknown environment 'toString'/);
    });

    it("should ask for baseUrl or environment 'local' when neither is given", () => {
      expect(() => new PaymentsClient(CREDENTIALS)).toThrow(
        new TypeError("PaymentsClient needs baseUrl (or environment: 'local')"),
      );
    });
  });

  describe('connection failure', () => {
    it('should name the address tried and that it came from baseUrl', async () => {
      const port = await closedPort();
      const error = await failure({ baseUrl: `http://127.0.0.1:${port}` });
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).message).toBe(
        `Connection failed: GET http://127.0.0.1:${port}/disbursements/verify/payout-1 (address from baseUrl)`,
      );
    });

    it('should prefer baseUrl when both are given, and say so', async () => {
      const port = await closedPort();
      const error = await failure({ baseUrl: `http://127.0.0.1:${port}`, environment: 'local' });
      expect((error as ConnectionError).message).toBe(
        `Connection failed: GET http://127.0.0.1:${port}/disbursements/verify/payout-1 (address from baseUrl)`,
      );
    });

    it("should name environment 'local' as the source of its address", async () => {
      const port = await closedPort();
      const error = await failure({
        environment: 'local',
        fetch: movedLocal(`http://127.0.0.1:${port}`),
      });
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).message).toBe(
        "Connection failed: GET http://127.0.0.1:8788/disbursements/verify/payout-1 (address from environment 'local')",
      );
    });

    it('should still mask personal data in the message', async () => {
      const port = await closedPort();
      const error = (await failure(
        { baseUrl: `http://127.0.0.1:${port}` },
        'grace@example.com',
      )) as ConnectionError;
      expect(error.message).toBe(
        `Connection failed: GET http://127.0.0.1:${port}/disbursements/verify/[email] (address from baseUrl)`,
      );
    });
  });
});
