// The checks of `npm run smoke`, in the order they run. Each one is independent: a failed
// step does not stop the next, so one run reports everything that is wrong.
import { REQUEST_ID_HEADER } from '../../lib/shared.ts';
import {
  expectStatus,
  field,
  SmokeCheckError,
  type SmokeResponse,
  type SmokeTarget,
  send,
} from './http.ts';

/** What the smoke test was given: the gateway, the tokens and whether it may write. */
export interface SmokeOptions extends SmokeTarget {
  /** A caller token of `GATEWAY_CALLERS`. */
  token: string;
  /** The gateway's `ADMIN_TOKEN`; without it the admin step is skipped. */
  adminToken: string | undefined;
  /** Whether the upstream is a sandbox, so creating a payment session is allowed. */
  allowWrite: boolean;
}

/** One check: its name in the report, why it is skipped (if it is), and what it does. */
export interface SmokeStep {
  /** Short, stable name printed on the step's line (`banks`). */
  name: string;
  /** Set when the step does not run with these options: the reason printed instead. */
  skipReason: string | undefined;
  /**
   * Runs the check.
   * @throws {SmokeCheckError} when the gateway's response is not the expected one.
   */
  run: () => Promise<void>;
}

/**
 * The steps of the smoke test for these options, in order: `healthz`, `banks`,
 * `idempotency-replay` (only with `allowWrite`), `admin-api` (only with `adminToken`),
 * `auth-required`.
 *
 * @param options - the gateway, the tokens, the per-request deadline and `allowWrite`.
 * @returns the steps; none has run yet.
 */
export function smokeSteps(options: SmokeOptions): SmokeStep[] {
  return [
    {
      name: 'healthz',
      skipReason: undefined,
      run: () => checkHealth(options),
    },
    {
      name: 'banks',
      skipReason: undefined,
      run: () => checkBanks(options),
    },
    {
      name: 'idempotency-replay',
      skipReason: options.allowWrite ? undefined : 'pass --allow-write against a sandbox upstream',
      run: () => checkIdempotencyReplay(options),
    },
    {
      name: 'admin-api',
      skipReason: options.adminToken === undefined ? 'pass --admin-token to check it' : undefined,
      run: () => checkAdmin(options),
    },
    {
      name: 'auth-required',
      skipReason: undefined,
      run: () => checkAuthRequired(options),
    },
  ];
}

/** `GET /healthz` answers 200 `{ "status": "ok" }`. */
async function checkHealth(options: SmokeOptions): Promise<void> {
  const answer = await send(options, { method: 'GET', path: '/healthz' });
  expectStatus(answer, 200);
  if (field(answer, 'status') !== 'ok')
    throw new SmokeCheckError('expected {"status":"ok"}', answer);
}

/** `GET /banks` with the caller token: 200, a non-empty `data` list, our request id echoed. */
async function checkBanks(options: SmokeOptions): Promise<void> {
  const requestId = `smoke-${crypto.randomUUID()}`;
  const answer = await send(options, {
    method: 'GET',
    path: '/banks',
    token: options.token,
    headers: { [REQUEST_ID_HEADER]: requestId },
  });
  expectStatus(answer, 200);
  const banks = field(answer, 'data');
  if (!Array.isArray(banks) || banks.length === 0) {
    throw new SmokeCheckError('expected a non-empty list of banks in "data"', answer);
  }
  const echoed = answer.headers.get(REQUEST_ID_HEADER);
  if (echoed !== requestId) {
    throw new SmokeCheckError(`expected ${REQUEST_ID_HEADER} ${requestId}, got ${echoed}`, answer);
  }
}

/**
 * `POST /payments/initialize` twice with one `Idempotency-Key`: the second answer is the
 * first, byte for byte, with `Idempotent-Replayed: true`; the key with another body is 422
 * `idempotency_key_reused`. A payment session moves no money until a customer pays it, so
 * this is the safest write there is; it still creates one, hence `--allow-write`.
 */
async function checkIdempotencyReplay(options: SmokeOptions): Promise<void> {
  const reference = smokeReference();
  const payment = {
    reference,
    amount: '1.00',
    currency: 'NGN',
    email: 'smoke@example.com',
    metadata: { smoke: true },
  };
  const initialize = (body: object) =>
    send(options, {
      method: 'POST',
      path: '/payments/initialize',
      token: options.token,
      headers: { 'Idempotency-Key': reference },
      body: JSON.stringify(body),
    });

  const first = await initialize(payment);
  if (first.status < 200 || first.status > 299) throw new SmokeCheckError('expected 2xx', first);
  if (first.headers.has('Idempotent-Replayed')) {
    throw new SmokeCheckError('the first request was answered as a replay', first);
  }
  const replay = await initialize(payment);
  expectStatus(replay, first.status);
  if (replay.text !== first.text) {
    throw new SmokeCheckError("expected the replay's body to be the first answer's", replay);
  }
  expectHeader(replay, 'Idempotent-Replayed', 'true');

  const reused = await initialize({ ...payment, amount: '2.00' });
  expectStatus(reused, 422);
  if (field(reused, 'code') !== 'idempotency_key_reused') {
    throw new SmokeCheckError('expected code idempotency_key_reused', reused);
  }
}

/** `GET /admin/deliveries/counts` with the admin token answers 200. */
async function checkAdmin(options: SmokeOptions): Promise<void> {
  const answer = await send(options, {
    method: 'GET',
    path: '/admin/deliveries/counts',
    ...(options.adminToken === undefined ? {} : { token: options.adminToken }),
  });
  expectStatus(answer, 200);
}

/** `GET /banks` without a token answers 401 `unauthorized`: the gateway is not open. */
async function checkAuthRequired(options: SmokeOptions): Promise<void> {
  const answer = await send(options, { method: 'GET', path: '/banks' });
  expectStatus(answer, 401);
  if (field(answer, 'code') !== 'unauthorized') {
    throw new SmokeCheckError('expected code unauthorized', answer);
  }
}

function expectHeader(answer: SmokeResponse, name: string, expected: string): void {
  const value = answer.headers.get(name);
  if (value !== expected) {
    throw new SmokeCheckError(`expected ${name}: ${expected}, got ${value ?? 'none'}`, answer);
  }
}

/**
 * A reference that says what it is wherever it shows up (the provider's dashboard, the
 * gateway's logs): `smoke-20250102T030405Z-1a2b3c4d`, the time in ISO 8601 basic format.
 */
function smokeReference(): string {
  const time = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  return `smoke-${time}-${crypto.randomUUID().slice(0, 8)}`;
}
