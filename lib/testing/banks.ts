// Banks and account resolution (docs/payments-api.md, "Endpoints > Banks").
import { ListBanksQuerySchema, ResolveAccountRequestSchema } from '../schemas/banks.ts';
import { accountHolderName } from './hash.ts';
import { invalidField, notFoundError } from './http-error.ts';
import { parseQuery, readJsonBody, type SandboxRequestContext } from './request.ts';
import { json } from './respond.ts';

/** A bank as listed by `GET /banks` (docs/payments-api.md, "Resources > Bank"). */
interface Bank {
  bank_name: string;
  bank_code: string;
}

/** Account number that never resolves: 404 (a magic value, docs/sandbox.md). */
const UNRESOLVABLE_ACCOUNT = '0000000000';

const NG_BANKS: Bank[] = [
  { bank_name: 'Access Bank', bank_code: '044' },
  // Two names share a code, as in the spec's sample list (Diamond merged into Access).
  { bank_name: 'Access Bank (Diamond)', bank_code: '044' },
  { bank_name: 'Citibank Nigeria', bank_code: '023' },
  { bank_name: 'Ecobank Nigeria', bank_code: '050' },
  { bank_name: 'Fidelity Bank', bank_code: '070' },
  { bank_name: 'First Bank of Nigeria', bank_code: '011' },
  { bank_name: 'First City Monument Bank', bank_code: '214' },
  { bank_name: 'Guaranty Trust Bank', bank_code: '058' },
  { bank_name: 'Heritage Bank', bank_code: '030' },
  { bank_name: 'Jaiz Bank', bank_code: '301' },
  { bank_name: 'Keystone Bank', bank_code: '082' },
  { bank_name: 'Polaris Bank', bank_code: '076' },
  { bank_name: 'Providus Bank', bank_code: '101' },
  { bank_name: 'Stanbic IBTC Bank', bank_code: '221' },
  { bank_name: 'Standard Chartered Bank', bank_code: '068' },
  { bank_name: 'Sterling Bank', bank_code: '232' },
  { bank_name: 'SunTrust Bank', bank_code: '100' },
  { bank_name: 'Union Bank of Nigeria', bank_code: '032' },
  { bank_name: 'United Bank For Africa', bank_code: '033' },
  { bank_name: 'Unity Bank', bank_code: '215' },
  { bank_name: 'Wema Bank', bank_code: '035' },
  { bank_name: 'Zenith Bank', bank_code: '057' },
];

const GH_BANKS: Bank[] = [
  { bank_name: 'Absa Bank Ghana', bank_code: '030100' },
  { bank_name: 'Ecobank Ghana', bank_code: '130100' },
  { bank_name: 'GCB Bank', bank_code: '040100' },
  { bank_name: 'Stanbic Bank Ghana', bank_code: '190100' },
];

const KE_BANKS: Bank[] = [
  { bank_name: 'Equity Bank Kenya', bank_code: '068' },
  { bank_name: 'KCB Bank Kenya', bank_code: '001' },
  { bank_name: 'NCBA Bank Kenya', bank_code: '007' },
];

/** The static bank lists by ISO 3166-1 alpha-2 country; other countries list nothing. */
const BANKS_BY_COUNTRY: Readonly<Record<string, readonly Bank[]>> = {
  NG: NG_BANKS,
  GH: GH_BANKS,
  KE: KE_BANKS,
};

const COUNTRY_BY_CURRENCY: Readonly<Record<string, string>> = { NGN: 'NG', GHS: 'GH', KES: 'KE' };

/** `GET /banks` (unsigned): `{ status, data: Bank[] }` for `country_code` (default NG). */
export function listBanks(ctx: SandboxRequestContext): Response {
  const query = parseQuery(ctx, ListBanksQuerySchema);
  return json({ status: 'success', data: BANKS_BY_COUNTRY[query.country_code] ?? [] });
}

/**
 * `POST /banks/resolve`: `{ status, data: { bank_name, bank_code, account_number,
 * account_name } }`, the name derived deterministically from bank and account.
 *
 * @throws 400 `validation_failed` (currency without a bank list, bank code not in it);
 *   404 `not_found` for account `0000000000`.
 */
export function resolveAccount(ctx: SandboxRequestContext): Response {
  const body = readJsonBody(ctx, ResolveAccountRequestSchema);
  const country = COUNTRY_BY_CURRENCY[body.currency];
  if (country === undefined) {
    throw invalidField('currency', `Account resolution is not available for ${body.currency}`);
  }
  const bank = BANKS_BY_COUNTRY[country]?.find((candidate) => candidate.bank_code === body.bank);
  if (bank === undefined) throw invalidField('bank', `Unknown bank code for ${body.currency}`);
  if (body.account === UNRESOLVABLE_ACCOUNT) throw notFoundError('Account could not be resolved');
  return json({
    status: 'success',
    data: {
      bank_name: bank.bank_name,
      bank_code: body.bank,
      account_number: body.account,
      account_name: accountHolderName(body.bank, body.account),
    },
  });
}
