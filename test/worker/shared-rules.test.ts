/**
 * The rules lib/shared.ts writes once, seen from outside: the same bad request body gets
 * the same status, code, message and issues from the proxy, the webhook ingress, the
 * admin API and the sandbox (the real Worker in workerd with real D1, the real sandbox
 * over HTTP); and the gateway and the sandbox keep or replace a caller's `X-Request-Id`
 * alike.
 */
import { describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../lib/index.ts';
import { type ErrorBody, fetchGateway, gatewayRequest, UUID, useCapturedLogs } from './helpers.ts';
import { ADMIN_TOKEN } from './routes/admin/admin-helpers.ts';
import { WEBHOOK_SECRET } from './routes/webhook-helpers.ts';

useCapturedLogs();

const encode = (text: string) => new TextEncoder().encode(text);
const JSON_TYPE = 'application/json';

/** One refusal as compared across the four readers. */
interface Refusal {
  status: number;
  code: string;
  message: string;
  issues: ErrorBody['issues'];
}

async function refusalOf(response: Response): Promise<Refusal> {
  const body = (await response.json()) as ErrorBody;
  return { status: response.status, code: body.code, message: body.message, issues: body.issues };
}

function headersOf(contentType: string | null, extra: Record<string, string> = {}): Headers {
  const headers = new Headers(extra);
  if (contentType !== null) headers.set('Content-Type', contentType);
  return headers;
}

/** The four places that read a JSON body, each sent the same bytes and Content-Type. */
const READERS: [string, (body: Uint8Array, contentType: string | null) => Promise<Response>][] = [
  [
    'the proxy (POST /banks/resolve)',
    (body, type) =>
      fetchGateway(
        gatewayRequest('/banks/resolve', { method: 'POST', headers: headersOf(type), body }),
      ),
  ],
  [
    'the webhook ingress (POST /webhooks, signed)',
    async (body, type) => {
      const signature = await signRequest({ keyId: 'sandbox-key', secret: WEBHOOK_SECRET, body });
      const headers = headersOf(type, { ...signature });
      // Its own limit, set to the proxy's default so one body is over both.
      return fetchGateway(
        gatewayRequest('/webhooks', { token: null, method: 'POST', headers, body }),
        { WEBHOOK_MAX_BODY_BYTES: '65536' } as Partial<Env>,
      );
    },
  ],
  [
    'the admin API (POST /admin/subscriptions)',
    (body, type) =>
      fetchGateway(
        gatewayRequest('/admin/subscriptions', {
          token: ADMIN_TOKEN,
          method: 'POST',
          headers: headersOf(type),
          body,
        }),
      ),
  ],
  [
    'the sandbox (POST /banks/resolve, signed)',
    async (body, type) => {
      const signature = await signRequest({ keyId: 'sandbox-key', secret: 'sandbox-secret', body });
      return fetch(`${inject('sandboxUrl')}/banks/resolve`, {
        method: 'POST',
        headers: headersOf(type, { ...signature }),
        body,
      });
    },
  ],
];

const notAnObject = (message: string): Refusal => ({
  status: 400,
  code: 'validation_failed',
  message: 'The request body is not a JSON object',
  issues: [{ path: '', message }],
});
const invalid = (path: string, message: string): Refusal => ({
  status: 400,
  code: 'validation_failed',
  message: 'The request body is invalid',
  issues: [{ path, message }],
});
const unsupported: Refusal = {
  status: 415,
  code: 'unsupported_media_type',
  message: 'Content-Type must be application/json (UTF-8)',
  issues: undefined,
};

const CASES: [string, Uint8Array, string | null, Refusal][] = [
  ['an empty body', new Uint8Array(), JSON_TYPE, invalid('', 'Expected a JSON object body')],
  ['a text/plain body', encode('{"a":1}'), 'text/plain', unsupported],
  ['a Latin-1 charset', encode('{"a":1}'), 'application/json; charset=iso-8859-1', unsupported],
  ['no Content-Type', encode('{"a":1}'), null, unsupported],
  [
    'invalid UTF-8',
    new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    JSON_TYPE,
    notAnObject('Expected UTF-8 text'),
  ],
  [
    'a byte order mark',
    new Uint8Array([0xef, 0xbb, 0xbf, ...encode('{"a":1}')]),
    JSON_TYPE,
    notAnObject('Expected JSON without a byte order mark'),
  ],
  ['truncated JSON', encode('{"a":'), JSON_TYPE, notAnObject('Expected a valid JSON document')],
  [
    'an array',
    encode('[{"a":1}]'),
    'application/vnd.x+json',
    notAnObject('Expected a JSON object'),
  ],
  [
    'a repeated key',
    encode('{"a":1,"a":2}'),
    JSON_TYPE,
    invalid('a', 'Duplicate key: each key may appear once'),
  ],
  [
    'a repeated key spelt with an escape, nested',
    encode('{"x":[{"k":1,"\\u006b":2}]}'),
    JSON_TYPE,
    invalid('x.0.k', 'Duplicate key: each key may appear once'),
  ],
  [
    'a body over 64 KiB',
    encode(`{"a":"${'x'.repeat(65_536)}"}`),
    JSON_TYPE,
    {
      status: 413,
      code: 'payload_too_large',
      message: 'Request body exceeds 65536 bytes',
      issues: undefined,
    },
  ],
];

describe('lib/shared rules', () => {
  describe('reading a JSON request body', () => {
    it.each(CASES)('should refuse %s alike everywhere', async (_, body, type, expected) => {
      const answers: Record<string, Refusal> = {};
      for (const [where, send] of READERS) answers[where] = await refusalOf(await send(body, type));
      expect(answers).toEqual(Object.fromEntries(READERS.map(([where]) => [where, expected])));
    });

    it('should list missing fields as Required everywhere', async () => {
      const body = encode('{}');
      const issues: Record<string, ErrorBody['issues']> = {};
      for (const [where, send] of READERS) {
        const refusal = await refusalOf(await send(body, JSON_TYPE));
        expect(refusal).toMatchObject({ status: 400, message: 'The request body is invalid' });
        issues[where] = refusal.issues;
      }
      for (const list of Object.values(issues)) {
        expect(list?.length).toBeGreaterThan(0);
        expect(list?.every((issue) => issue.message === 'Required')).toBe(true);
      }
    });
  });

  describe('X-Request-Id', () => {
    const gateway = (id: string) =>
      fetchGateway(gatewayRequest('/refunds/count-by-status', { requestId: id }));
    const sandbox = (id: string) =>
      fetch(`${inject('sandboxUrl')}/__sandbox/state`, { headers: { 'X-Request-Id': id } });

    it.each([
      ['of 128 visible ASCII characters', `k-${'a'.repeat(126)}`],
      ['with punctuation', `caller:42/ABC_def.9~${crypto.randomUUID()}`],
    ])('should keep an id %s at the gateway and the sandbox', async (_, id) => {
      expect((await gateway(id)).headers.get('X-Request-Id')).toBe(id);
      expect((await sandbox(id)).headers.get('X-Request-Id')).toBe(id);
    });

    it.each([
      ['of 129 characters', 'a'.repeat(129)],
      ['of 200 characters', 'b'.repeat(200)],
      ['with a space', 'abc def'],
    ])('should replace an id %s with a UUID at the gateway and the sandbox', async (_, id) => {
      expect((await gateway(id)).headers.get('X-Request-Id')).toMatch(UUID);
      expect((await sandbox(id)).headers.get('X-Request-Id')).toMatch(UUID);
    });

    it('should generate a UUID at both when none is sent', async () => {
      const res = await fetchGateway(gatewayRequest('/refunds/count-by-status'));
      expect(res.headers.get('X-Request-Id')).toMatch(UUID);
      expect(
        (await fetch(`${inject('sandboxUrl')}/__sandbox/state`)).headers.get('X-Request-Id'),
      ).toMatch(UUID);
    });
  });
});
