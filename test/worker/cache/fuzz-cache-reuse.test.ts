/**
 * Property: a cached answer is only ever reused for the exact same upstream request.
 * Random pairs of requests to the cached routes (`GET /banks` with query strings of
 * declared and undeclared names, re-encoded, repeated or with stray separators;
 * `POST /banks/resolve` with bodies reordered, spaced, with extra or repeated members, and
 * query strings), sent one after the other to the real Worker on the real KV namespace,
 * emptied before each pair. Whenever the second is answered 200 without reaching the
 * sandbox (served from KV), the first reached the sandbox exactly once, with the method,
 * path, query string and body bytes the second would have been forwarded with.
 */
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  FUZZ_PARAMETERS,
  fuzzFetch,
  fuzzTimeout,
  UPSTREAM_5XX,
  useFuzzTally,
} from '../fuzz-helpers.ts';
import { gatewayRequest, sandboxRequests, uniqueRequestId } from '../helpers.ts';
import { kvRecorder } from './kv-recorder.ts';

const tally = useFuzzTally('cached routes');
const recorder = kvRecorder();

/** One request of a pair, as sent (and as the gateway would forward it). */
interface Probe {
  readonly method: 'GET' | 'POST';
  readonly path: '/banks' | '/banks/resolve';
  /** The query string without its `?` (`''` for none). */
  readonly query: string;
  /** The body text (`''` for a GET). */
  readonly body: string;
}

// `X` codes are user-assigned in ISO 3166: no other test or real country uses XG or XH.
const COUNTRIES = ['XG', 'XH'];
const BANK_CODES = ['058', '057'];
/** Two account numbers of this run: few values, so that pairs often share a cache key. */
const ACCOUNTS = [0, 1].map(() => String(1_000_000_000 + Math.floor(Math.random() * 8e9)));

/** A `name=value` piece of a query string: declared and undeclared names, odd spellings. */
const queryPiece = fc.oneof(
  fc.constantFrom(...COUNTRIES).map((country) => `country_code=${country}`),
  fc
    .tuple(
      fc.constantFrom(
        'country_code',
        'Country_Code',
        'perPage',
        'currency',
        'page',
        'country%5Fcode',
      ),
      fc.constantFrom('XG', 'XH', 'X%47', 'xg', 'USD', '1', ''),
    )
    .map(([name, value]) => `${name}=${value}`),
  fc.constantFrom('', 'country_code', '='),
);

/** A query string for `GET /banks`: often exactly `country_code=XG`, else anything close. */
const banksQuery = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('', ...COUNTRIES.map((c) => `country_code=${c}`)) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom('', '&'),
        fc.array(queryPiece, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('', '&'),
      )
      .map(([head, pieces, tail]) => `${head}${pieces.join('&')}${tail}`),
  },
);

const banksProbe: fc.Arbitrary<Probe> = banksQuery.map((query) => ({
  method: 'GET',
  path: '/banks',
  query,
  body: '',
}));

/** A resolve body's text: the three fields in any order, maybe extra or repeated members, maybe spaced. */
const resolveBody = fc
  .record({
    bank: fc.constantFrom(...BANK_CODES),
    account: fc.constantFrom(...ACCOUNTS),
    extra: fc.constantFrom(
      '',
      '',
      '',
      '"extra":"x"',
      '"currency_code":"GHS"',
      `"account":"${ACCOUNTS[1]}"`,
      '"bank":"058"',
    ),
    order: fc.constantFrom([0, 1, 2], [0, 1, 2], [1, 0, 2], [2, 1, 0]),
    space: fc.constantFrom('', '', ' ', '\n'),
  })
  .map(({ bank, account, extra, order, space }) => {
    const members = [`"bank":"${bank}"`, `"account":"${account}"`, '"currency":"NGN"'];
    const ordered = order.map((index) => members[index] as string);
    if (extra !== '') ordered.push(extra);
    return `{${space}${ordered.join(`,${space}`)}}`;
  });

const resolveProbe: fc.Arbitrary<Probe> = fc
  .tuple(resolveBody, fc.constantFrom('', '', '', 'bank=058', 'x=1'))
  .map(([body, query]) => ({ method: 'POST', path: '/banks/resolve', query, body }));

const anyProbe = fc.oneof(banksProbe, resolveProbe);

/** Pairs: independent, the same request twice, or two of the same route. */
const pairs: fc.Arbitrary<[Probe, Probe]> = fc.oneof(
  fc.tuple(anyProbe, anyProbe),
  anyProbe.map((probe): [Probe, Probe] => [probe, probe]),
  fc.tuple(banksProbe, banksProbe),
  fc.tuple(resolveProbe, resolveProbe),
);

function requestOf(probe: Probe, id: string): Request {
  const url = `${probe.path}${probe.query === '' ? '' : `?${probe.query}`}`;
  if (probe.method === 'GET') return gatewayRequest(url, { requestId: id });
  return gatewayRequest(url, {
    method: 'POST',
    requestId: id,
    headers: { 'Content-Type': 'application/json' },
    body: probe.body,
  });
}

/** Sends `probe` through the recorded KV; waits for the writes it started. */
async function send(probe: Probe): Promise<{ id: string; status: number }> {
  const id = uniqueRequestId();
  const answer = await fuzzFetch(requestOf(probe, id), {
    env: { CACHE: recorder.kv },
    allowed5xx: UPSTREAM_5XX,
  });
  await recorder.settled();
  return { id, status: answer.status };
}

let servedFromKv = 0;

beforeAll(async () => {
  await Promise.all(
    ['banks:v1:default', ...COUNTRIES.map((c) => `banks:v1:${c}`)].map((key) =>
      env.CACHE.delete(key),
    ),
  );
});

afterAll(async () => {
  await recorder.clear();
});

describe('fuzz: KV cache reuse', () => {
  it('should reuse a cached answer only for the exact upstream request that stored it', {
    timeout: fuzzTimeout(60),
  }, async () => {
    const sandboxUrl = inject('fuzzSandboxUrl');
    await fc.assert(
      fc.asyncProperty(pairs, async ([first, second]) => {
        await recorder.clear();
        const a = await send(first);
        const b = await send(second);
        tally.record('pairs', b.status);
        if (b.status !== 200 || (await sandboxRequests(b.id, sandboxUrl)).length > 0) return;
        servedFromKv += 1;
        tally.record('second served from KV', b.status);
        const reached = await sandboxRequests(a.id, sandboxUrl);
        const why = `first ${JSON.stringify(first)} (status ${a.status}), second ${JSON.stringify(second)}`;
        expect(
          reached.map(({ method, path, query, body }) => ({ method, path, query, body })),
          why,
        ).toEqual([second]);
      }),
      FUZZ_PARAMETERS,
    );
    // The property is only tested if some answers were served from KV.
    expect(servedFromKv).toBeGreaterThan(0);
  });
});
