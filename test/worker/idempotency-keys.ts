/**
 * The idempotency keys' Durable Objects as the gateway tests see them: a key's record read
 * through the object's own `find`, rows laid out in the object's SQLite (a claim a dead
 * Worker left behind, a key past its retention), and the `IDEMPOTENCY_KEYS` namespace
 * wrapped so that chosen calls fail, wait at a gate, or are counted. The wrappers call the
 * real objects; only the failures and the waiting are the test's.
 */
import { env, runInDurableObject } from 'cloudflare:test';
import { keyBucketName } from '../../worker/objects/buckets.ts';
import type {
  IdempotencyKeyRecord,
  IdempotencyKeys,
} from '../../worker/objects/idempotency-keys.ts';

/** The object holding a caller's key, on the real namespace. */
export async function keyStub(caller: string, key: string) {
  return env.IDEMPOTENCY_KEYS.getByName(await keyBucketName(caller, key));
}

/** A key's record, expired or not; `undefined` when there is no row. */
export async function findIdempotencyKey(
  caller: string,
  key: string,
): Promise<IdempotencyKeyRecord | undefined> {
  return (await keyStub(caller, key)).find(caller, key);
}

/**
 * Runs one SQL statement in the object holding `caller`'s `key` (its table is
 * `idempotency_keys`, the columns of worker/objects/idempotency-keys.ts).
 *
 * @returns the rows the statement read.
 */
export async function execOnKey(
  caller: string,
  key: string,
  query: string,
  ...bindings: SqlStorageValue[]
): Promise<Record<string, SqlStorageValue>[]> {
  return runInDurableObject(await keyStub(caller, key), (_, state) =>
    state.storage.sql.exec(query, ...bindings).toArray(),
  );
}

/** A row of a key to lay out with {@link putIdempotencyKey}; times in epoch ms. */
export interface KeyRow {
  readonly caller: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly state?: 'in_flight' | 'completed';
  readonly lockedUntil: number;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The stored answer of a completed key. */
  readonly response?: { status: number; headers?: Record<string, string>; body?: string };
}

/** Writes a key's row as a claim (or a completed key) would have left it. */
export async function putIdempotencyKey(row: KeyRow): Promise<void> {
  const response = row.response;
  await execOnKey(
    row.caller,
    row.key,
    `INSERT INTO idempotency_keys (caller, idempotency_key, fingerprint, state, locked_until,
       response_status, response_headers, response_body, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    row.caller,
    row.key,
    row.fingerprint,
    row.state ?? 'in_flight',
    row.lockedUntil,
    response?.status ?? null,
    response === undefined ? null : JSON.stringify(response.headers ?? {}),
    response?.body === undefined
      ? null
      : (new TextEncoder().encode(response.body).buffer as ArrayBuffer),
    row.createdAt,
    row.expiresAt,
  );
}

/** The calls of the object, by what they do (`lock`: a settle window or a lock ended stale). */
export type KeyCall = 'claim' | 'complete' | 'lock' | 'release' | 'find';

const CALL_OF: Readonly<Record<string, KeyCall>> = {
  claim: 'claim',
  complete: 'complete',
  expireLock: 'lock',
  settleLock: 'lock',
  release: 'release',
  find: 'find',
};

/** What a wrapped namespace does with each call: its name, and the real call to run. */
export type KeyCallHook = <T>(call: KeyCall, run: () => Promise<T>) => Promise<T>;

/**
 * The `IDEMPOTENCY_KEYS` namespace with every call of its objects passed through `hook`
 * (which may fail it, hold it, or count it before or after running it).
 */
export function hookedKeys(
  hook: KeyCallHook,
  real: DurableObjectNamespace<IdempotencyKeys> = env.IDEMPOTENCY_KEYS,
): DurableObjectNamespace<IdempotencyKeys> {
  const wrapStub = (stub: object) =>
    new Proxy(stub, {
      get(target, property) {
        const value = Reflect.get(target, property) as unknown;
        const call = typeof property === 'string' ? CALL_OF[property] : undefined;
        if (call === undefined || typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          // Reflect.apply: on an RPC stub's method, `.apply` would be a remote method's name.
          hook(call, async () => await Reflect.apply(value, target, args));
      },
    });
  return new Proxy(real, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value === 'function' && property !== 'getByName' && property !== 'get') {
        return (value as (...a: unknown[]) => unknown).bind(target);
      }
      if (property !== 'getByName' && property !== 'get') return value;
      return (...args: unknown[]) =>
        wrapStub(Reflect.apply(value as (...a: unknown[]) => object, target, args));
    },
  });
}

/** What the object's connection rejects with when it drops; the wrapper rejects the same way. */
function droppedError(call: KeyCall): Error {
  return new Error(`Network connection lost (injected fault on ${call})`);
}

/** Options of {@link faultyKeys}. */
export interface KeyFaultPlan {
  /** The calls that fail. */
  readonly failOn: KeyCall;
  /** How many matching calls fail; later ones pass through. @default 1 */
  readonly times?: number;
  /**
   * `before`: the call fails without running (nothing written); `after`: it runs, then its
   * answer is lost (the write landed, the caller saw an error). @default 'before'
   */
  readonly when?: 'before' | 'after';
}

/** A namespace with injected failures; `injected` says how many fired. */
export type FaultyKeys = DurableObjectNamespace<IdempotencyKeys> & { readonly injected: number };

/** The real namespace with the calls `plan` names failing as a dropped connection does. */
export function faultyKeys(plan: KeyFaultPlan): FaultyKeys {
  let left = plan.times ?? 1;
  let injected = 0;
  const namespace = hookedKeys(async (call, run) => {
    if (call !== plan.failOn || left <= 0) return run();
    left--;
    injected++;
    if (plan.when === 'after') await run();
    throw droppedError(call);
  });
  return new Proxy(namespace, {
    get: (target, property) => (property === 'injected' ? injected : Reflect.get(target, property)),
  }) as FaultyKeys;
}
