import { env, exports } from 'cloudflare:workers';
import { describe, expect, inject, it } from 'vitest';
import { HEALTH_CHECK_TIMEOUTS_MS, runDeepHealthChecks } from '../../../worker/health/checks.ts';
import { faultyD1, faultyKv, faultyUpstream } from '../fault-bindings.ts';
import {
  CALLER_TOKEN,
  errorBody,
  fetchGateway,
  GATEWAY_ORIGIN,
  gatewayRequest,
  onlySandboxRequest,
  sandboxRequests,
  UUID,
  uniqueRequestId,
  useCapturedLogs,
} from '../helpers.ts';
import { ADMIN_TOKEN, adminRequest } from '../routes/admin/admin-helpers.ts';

const logs = useCapturedLogs();

/** `UPSTREAM_SECRET` as configured in vitest.config.ts. */
const UPSTREAM_SECRET = 'sandbox-secret';

/** A check of the deep response. */
interface Check {
  status: 'ok' | 'error';
  latency_ms: number;
  error?: string;
}

/** The deep response's body. */
interface DeepBody {
  status: 'ok' | 'degraded';
  checks: Record<'d1' | 'kv' | 'queue' | 'upstream', Check>;
}

/** `GET /healthz?deep=1` with the admin token (unless `token` says otherwise), through the real Worker. */
async function deepHealth(
  overrides: Partial<Env> = {},
  init: { token?: string | null; requestId?: string; query?: string } = {},
): Promise<Response> {
  const { query = 'deep=1', ...rest } = init;
  return fetchGateway(adminRequest('GET', `/healthz?${query}`, rest), overrides);
}

const OK_CHECK = { status: 'ok', latency_ms: expect.any(Number) };

/** Expects a 503 in which only `failed` is an error, with `message`; returns the body. */
async function expectDegraded(
  res: Response,
  failed: keyof DeepBody['checks'],
  message: string | RegExp,
): Promise<DeepBody> {
  const body = (await res.json()) as DeepBody;
  expect(res.status, JSON.stringify(body)).toBe(503);
  expect(body.status).toBe('degraded');
  for (const [name, check] of Object.entries(body.checks)) {
    if (name === failed) {
      expect(check.status, name).toBe('error');
      expect(check.error, name).toMatch(message);
    } else {
      expect(check, name).toEqual(OK_CHECK);
    }
  }
  return body;
}

/** Bindings that miss the `DELIVERIES` producer (the type says it is always there). */
const WITHOUT_QUEUE = { DELIVERIES: undefined as unknown as Queue };

describe('gateway', () => {
  describe('GET /healthz', () => {
    it('should answer 200 { status: "ok" } without a token', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`);
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual({ status: 'ok' });
    });

    it('should carry a generated X-Request-Id', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`);
      expect(res.headers.get('X-Request-Id')).toMatch(UUID);
    });

    it('should ignore a wrong token', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`, {
        headers: { Authorization: 'Bearer nope' },
      });
      expect(res.status).toBe(200);
    });

    it('should answer 405 with Allow: GET to a POST', async () => {
      const res = await exports.default.fetch(`${GATEWAY_ORIGIN}/healthz`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.get('Allow')).toBe('GET');
      expect((await errorBody(res)).code).toBe('method_not_allowed');
    });

    it('should touch nothing without deep=1, where deep=1 reaches the upstream', async () => {
      const broken = { DB: faultyD1(env.DB, { failOn: /./ }), ...WITHOUT_QUEUE };
      for (const query of ['', '?deep=0', '?_=1735689600', '?deep=0&cb=x']) {
        const id = uniqueRequestId();
        const res = await fetchGateway(
          gatewayRequest(`/healthz${query}`, { token: null, requestId: id }),
          broken,
        );
        expect(res.status, query).toBe(200);
        expect(await res.json(), query).toEqual({ status: 'ok' });
        expect(await sandboxRequests(id), query).toEqual([]);
        expect(broken.DB.injected, query).toBe(0);
      }
      // The control: the same log shows the deep check's one request under its id.
      const id = uniqueRequestId();
      expect((await deepHealth({}, { requestId: id })).status).toBe(200);
      expect(await onlySandboxRequest(id)).toMatchObject({ method: 'GET', path: '/banks' });
    });
  });

  describe('GET /healthz?deep=1', () => {
    it('should answer 200 with four ok checks and their latencies in milliseconds', async () => {
      const res = await deepHealth();
      const body = (await res.json()) as DeepBody;
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.headers.get('Cache-Control')).toBe('no-store');
      expect(body).toEqual({
        status: 'ok',
        checks: { d1: OK_CHECK, kv: OK_CHECK, queue: OK_CHECK, upstream: OK_CHECK },
      });
      for (const check of Object.values(body.checks)) {
        expect(Number.isInteger(check.latency_ms)).toBe(true);
        expect(check.latency_ms).toBeGreaterThanOrEqual(0);
      }
    });

    it('should ignore query parameters other than deep', async () => {
      const res = await deepHealth({}, { query: 'deep=1&_=1735689600' });
      expect(res.status).toBe(200);
      expect(Object.keys(((await res.json()) as DeepBody).checks)).toEqual([
        'd1',
        'kv',
        'queue',
        'upstream',
      ]);
    });

    for (const [name, token] of [
      ['without a token', null],
      ['with a caller token', CALLER_TOKEN],
      ['with a wrong token', `${ADMIN_TOKEN}x`],
    ] as const) {
      it(`should answer 401 ${name}, checking nothing`, async () => {
        const id = uniqueRequestId();
        const db = faultyD1(env.DB, { failOn: /./ });
        const res = await deepHealth({ DB: db }, { token, requestId: id });
        expect(res.status).toBe(401);
        expect(res.headers.get('WWW-Authenticate')).toBe('Bearer');
        const body = (await errorBody(res)) as unknown as Record<string, unknown>;
        expect(body).toMatchObject({ status: 'error', code: 'unauthorized', request_id: id });
        expect(body).not.toHaveProperty('checks');
        expect(db.injected).toBe(0);
        expect(await sandboxRequests(id)).toEqual([]);
      });
    }

    it('should answer 400 validation_failed naming deep for any other value, before the token', async () => {
      for (const query of ['deep=2', 'deep=true', 'deep=', 'deep=1&deep=1']) {
        for (const token of [ADMIN_TOKEN, null]) {
          const res = await deepHealth({}, { query, token });
          expect(res.status, query).toBe(400);
          const body = await errorBody(res);
          expect(body.code, query).toBe('validation_failed');
          expect(
            body.issues?.map((issue) => issue.path),
            query,
          ).toEqual(['deep']);
        }
      }
    });

    it('should answer 503 degraded with d1 in error when D1 fails', async () => {
      const db = faultyD1(env.DB, { failOn: /./ });
      await expectDegraded(await deepHealth({ DB: db }), 'd1', 'D1 read failed');
      expect(db.injected).toBe(1);
      expect(logs.lines()).toContainEqual(
        expect.objectContaining({ event: 'health_check_failed', check: 'd1' }),
      );
    });

    it('should read every shard D1_SHARDS names, and name the one that fails', async () => {
      const shards = `DB; 2026-01-01T00:00:00Z=DB,DB_SHARD_1,DB_SHARD_2`;
      const ok = await deepHealth({ D1_SHARDS: shards });
      expect(ok.status).toBe(200);
      const db = faultyD1(env.DB_SHARD_2, { failOn: /./ });
      await expectDegraded(
        // The test shards are bound for the tests alone (Cloudflare.Env), not in `Env`.
        await deepHealth({ D1_SHARDS: shards, DB_SHARD_2: db } as Partial<Env>),
        'd1',
        'D1 read failed (DB_SHARD_2)',
      );
      expect(db.injected).toBe(1);
      await expectDegraded(
        await deepHealth({ D1_SHARDS: 'DB,DB_SHARD_9' }),
        'd1',
        'D1 binding missing (DB_SHARD_9)',
      );
    });

    it('should answer 503 degraded with kv in error when KV fails', async () => {
      const kv = faultyKv(env.CACHE, { failOn: ['get'] });
      await expectDegraded(await deepHealth({ CACHE: kv }), 'kv', 'KV read failed');
      expect(kv.injected).toBe(1);
    });

    it('should answer 503 degraded with queue in error without the DELIVERIES binding', async () => {
      await expectDegraded(await deepHealth(WITHOUT_QUEUE), 'queue', 'DELIVERIES binding missing');
    });

    it('should answer 503 degraded with upstream in error when the upstream is unreachable', async () => {
      const res = await deepHealth({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9' });
      await expectDegraded(res, 'upstream', 'GET /banks could not connect');
    });

    it('should answer 503 degraded with upstream in error on an upstream 5xx', async () => {
      const id = uniqueRequestId();
      const faults = faultyUpstream();
      faults.inject(id, { kind: 'status', status: 502, processed: false }, { path: '/banks' });
      await expectDegraded(
        await deepHealth({}, { requestId: id }),
        'upstream',
        'GET /banks answered HTTP 502',
      );
      expect(faults.injected).toBe(1);
    });

    it('should give up on an upstream slower than UPSTREAM_TIMEOUT_MS', async () => {
      const id = uniqueRequestId();
      const faults = faultyUpstream();
      faults.inject(id, { kind: 'late', delayMs: 800 }, { path: '/banks' });
      const res = await deepHealth({ UPSTREAM_TIMEOUT_MS: '200' }, { requestId: id });
      const body = await expectDegraded(res, 'upstream', 'no answer within 200 ms');
      expect(body.checks.upstream.latency_ms).toBeGreaterThanOrEqual(200);
      expect(body.checks.upstream.latency_ms).toBeLessThan(800);
      await faults.settled();
    });

    it('should keep secrets, URLs and stacks out of the answer and the logs', async () => {
      const answers: string[] = [];
      for (const overrides of [
        {
          DB: faultyD1(env.DB, { failOn: /./ }),
          CACHE: faultyKv(env.CACHE, { failOn: ['get'] }),
          ...WITHOUT_QUEUE,
          UPSTREAM_BASE_URL: 'http://127.0.0.1:9/prefix',
        },
        { UPSTREAM_BASE_URL: `${inject('sandboxUrl')}/prefix` },
      ]) {
        const res = await deepHealth(overrides);
        expect(res.status).toBe(503);
        answers.push(await res.text());
      }
      const all = JSON.parse(answers[0] ?? '{}') as DeepBody;
      expect(Object.values(all.checks).map((check) => check.status)).toEqual([
        'error',
        'error',
        'error',
        'error',
      ]);
      expect((JSON.parse(answers[1] ?? '{}') as DeepBody).checks.upstream.error).toBe(
        'GET /banks answered HTTP 404',
      );
      for (const text of [...answers, logs.text()]) {
        for (const secret of [
          UPSTREAM_SECRET,
          'a-wrong-secret',
          ADMIN_TOKEN,
          CALLER_TOKEN,
          '127.0.0.1',
          '/prefix',
        ]) {
          expect(text).not.toContain(secret);
        }
        expect(text).not.toMatch(/\n\s+at |http:\/\//);
      }
    });
  });

  describe('runDeepHealthChecks', () => {
    it('should bound each probe by its own timeout', async () => {
      const hanging = {
        prepare: () => ({ first: () => new Promise<never>(() => {}) }),
      } as unknown as D1Database;
      const started = Date.now();
      const result = await runDeepHealthChecks({ ...env, DB: hanging }, uniqueRequestId(), {
        ...HEALTH_CHECK_TIMEOUTS_MS,
        d1: 50,
      });
      expect(result.status).toBe('degraded');
      expect(result.checks.d1).toMatchObject({ status: 'error', error: 'no answer within 50 ms' });
      expect(result.checks.d1.latency_ms).toBeGreaterThanOrEqual(50);
      expect(result.checks.upstream).toEqual(OK_CHECK);
      expect(Date.now() - started).toBeLessThan(HEALTH_CHECK_TIMEOUTS_MS.d1);
    });
  });
});
