/**
 * Contract tests of the sandbox emulator's banks over real HTTP (docs/payments-api.md,
 * "Endpoints > Banks"; magic values in docs/sandbox.md): the open bank list and account-name resolution.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, expectValidation } from '../../support/expect-api.ts';
import type { Json } from '../../support/sandbox-client.ts';
import { useSandboxClient } from '../../support/sandbox-fixture.ts';

const api = useSandboxClient();
let banks: Json[];

beforeAll(async () => {
  banks = (await listBanks()).body?.data ?? [];
});

/** `GET /banks` with `query` (e.g. `?country_code=GH`), unsigned: the list is open. */
function listBanks(query = '') {
  return api.call('GET', `/banks${query}`, undefined, { sign: false });
}

function resolve(body: Record<string, unknown>, sign = true) {
  return api.call('POST', '/banks/resolve', body, { sign });
}

/** A resolve body for `account` at the first listed bank in NGN; `overrides` vary it. */
function resolveBody(account: string, overrides: Record<string, unknown> = {}) {
  return { bank: banks[0].bank_code, account, currency: 'NGN', ...overrides };
}

describe('sandbox banks', () => {
  describe('GET /banks', () => {
    it('should list banks with a string bank_name and bank_code without signature', async () => {
      const res = await listBanks();
      expectSuccess(res);
      expect(res.body.data.length).toBeGreaterThan(0);
      for (const bank of res.body.data as Json[]) {
        expect(typeof bank.bank_name).toBe('string');
        expect(bank.bank_name.length).toBeGreaterThan(0);
        expect(typeof bank.bank_code).toBe('string');
        expect(bank.bank_code).toMatch(/^\d+$/);
      }
    });

    it('should default country_code to NG', async () => {
      const res = await listBanks('?country_code=NG');
      expectSuccess(res);
      expect(res.body.data).toEqual(banks);
    });

    it('should also answer a signed request', async () => {
      const res = await api.call('GET', '/banks');
      expectSuccess(res);
      expect(res.body.data).toEqual(banks);
    });

    it('should list other banks for another supported country', async () => {
      const res = await listBanks('?country_code=GH');
      expectSuccess(res);
      expect(res.body.data.length).toBeGreaterThan(0);
      expect(res.body.data).not.toEqual(banks);
    });

    it('should answer an empty list for a country without banks', async () => {
      const res = await listBanks('?country_code=ZZ');
      expectSuccess(res);
      expect(res.body.data).toEqual([]);
    });

    it('should reject a lowercase country_code with 400 naming country_code', async () => {
      const res = await listBanks('?country_code=ng');
      expectValidation(res, ['country_code']);
    });

    it('should reject a country_code that is not two letters with 400', async () => {
      const res = await listBanks('?country_code=NGA');
      expectValidation(res, ['country_code']);
    });
  });

  describe('POST /banks/resolve', () => {
    it('should resolve an account to a holder name, echoing bank code and account', async () => {
      const bank = banks[0];
      const res = await resolve(resolveBody('0123456789'));
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        bank_code: bank.bank_code,
        account_number: '0123456789',
      });
      expect(typeof res.body.data.account_name).toBe('string');
      expect(res.body.data.account_name.length).toBeGreaterThan(0);
      expect(banks.filter((b) => b.bank_code === bank.bank_code).map((b) => b.bank_name)).toContain(
        res.body.data.bank_name,
      );
    });

    it('should resolve the same account to the same name every time', async () => {
      const body = resolveBody('2222222222');
      const first = await resolve(body);
      const second = await resolve(body);
      expect(second.body.data.account_name).toBe(first.body.data.account_name);
    });

    it('should answer 404 not_found for account 0000000000', async () => {
      const res = await resolve(resolveBody('0000000000'));
      expectError(res, 404, 'not_found');
    });

    it('should reject a bank code that is not listed with an issue at bank', async () => {
      const listed = new Set(banks.map((b) => b.bank_code));
      let code = 100;
      while (listed.has(String(code))) code += 1;
      const res = await resolve(resolveBody('0123456789', { bank: String(code) }));
      expectValidation(res, ['bank']);
    });

    it('should reject a currency without a bank list with an issue at currency', async () => {
      const res = await resolve(resolveBody('0123456789', { currency: 'USD' }));
      expectValidation(res, ['currency']);
    });

    it('should list every missing field as an issue', async () => {
      expectValidation(await resolve({}), ['bank', 'account', 'currency']);
    });

    it('should reject an account number with letters with an issue at account', async () => {
      const res = await resolve(resolveBody('01234abcde'));
      expectValidation(res, ['account']);
    });

    it('should require signature headers', async () => {
      const res = await resolve(resolveBody('0123456789'), false);
      expectError(res, 401, 'unauthorized');
    });
  });
});
