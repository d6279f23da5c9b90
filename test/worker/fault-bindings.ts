/**
 * Fault injection for the gateway tests: wrappers over the real bindings (D1, a Queue
 * producer, KV) and over the Worker's outbound `fetch`, each adding failures to the real
 * thing and passing every other call through unchanged. Pass the wrapped bindings to the
 * real Worker with `fetchGateway(request, { DB, DELIVERIES, CACHE })`, `runQueue` or the
 * `scheduled` handler; what a test checks afterwards is the real D1, the real sandbox's
 * request log and the real receiver.
 *
 * @example
 * ```ts
 * const db = faultyD1(env.DB, { failOn: /INSERT INTO idempotency_keys/ });
 * const res = await fetchGateway(request, { DB: db });
 * expect(db.injected).toBe(1);
 * ```
 */
import { expect, inject, vi } from 'vitest';
import { fetchGateway, postJson, sandboxRequests, uniqueRequestId } from './helpers.ts';

/** How a wrapper fails: how many matching calls, and whether the call ran first. */
interface FaultPlan {
  /** How many matching calls fail; later ones pass through. @default 1 */
  readonly times?: number;
  /**
   * `before`: the call fails without running (nothing written); `after`: it runs, then
   * its response is lost (the write landed, the caller saw an error). @default 'before'
   */
  readonly when?: 'before' | 'after';
}

/** One injected fault: counts down its `times` and counts what it injected. */
class Fault {
  readonly #when: 'before' | 'after';
  #left: number;
  injected = 0;

  constructor(plan: FaultPlan) {
    this.#left = plan.times ?? 1;
    this.#when = plan.when ?? 'before';
  }

  /** Whether this call is to fail (it `matches` and failures are left); counts it if so. */
  take(matches: boolean): boolean {
    if (!matches || this.#left <= 0) return false;
    this.#left--;
    this.injected++;
    return true;
  }

  /** Runs `call`, or fails it as planned when it `matches` and failures are left. */
  async run<T>(matches: boolean, call: () => Promise<T>, error: () => Error): Promise<T> {
    if (!this.take(matches)) return call();
    if (this.#when === 'after') await call();
    throw error();
  }
}

/** What D1 rejects with when its connection drops; the wrappers reject with the same kind. */
function d1Error(sql: string): Error {
  return new Error(
    `D1_ERROR: Network connection lost (injected fault on ${sql.trim().slice(0, 40)})`,
  );
}

/** Options of {@link faultyD1}. */
export interface D1FaultPlan extends FaultPlan {
  /** The statements that fail, matched against their SQL text; a batch fails when any of its statements match. */
  readonly failOn: RegExp;
}

/** A D1 binding with injected failures; {@link FaultyD1.injected} says how many fired. */
export class FaultyD1 implements D1Database {
  readonly #real: D1Database;
  readonly #fault: Fault;
  readonly #failOn: RegExp;

  /**
   * @param real - the real binding (`env.DB`).
   * @param plan - which statements fail, how often and when.
   */
  constructor(real: D1Database, plan: D1FaultPlan) {
    this.#real = real;
    this.#fault = new Fault(plan);
    this.#failOn = plan.failOn;
  }

  /** How many failures were injected so far. */
  get injected(): number {
    return this.#fault.injected;
  }

  /** Runs `call` for `sql`, failing it when it matches the plan. */
  guard<T>(sql: string, call: () => Promise<T>): Promise<T> {
    return this.#fault.run(this.#failOn.test(sql), call, () => d1Error(sql));
  }

  prepare(query: string): D1PreparedStatement {
    return new FaultyStatement(this, this.#real.prepare(query), query);
  }

  /** A batch is one transaction: it fails whole, before or after committing. */
  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    const real = statements.map((s) => (s instanceof FaultyStatement ? s.real : s));
    const matched = statements.find(
      (s) => s instanceof FaultyStatement && this.#failOn.test(s.sql),
    );
    const sql = matched instanceof FaultyStatement ? matched.sql : '';
    return this.#fault.run(
      matched !== undefined,
      () => this.#real.batch<T>(real),
      () => d1Error(sql),
    );
  }

  exec(query: string): Promise<D1ExecResult> {
    return this.guard(query, () => this.#real.exec(query));
  }

  /** Not wrapped: the gateway opens no sessions. */
  withSession(constraintOrBookmark?: D1SessionBookmark | D1SessionConstraint): D1DatabaseSession {
    return this.#real.withSession(constraintOrBookmark);
  }

  dump(): Promise<ArrayBuffer> {
    return this.#real.dump();
  }
}

/** A prepared statement of a {@link FaultyD1}: keeps its SQL so the plan can match it. */
class FaultyStatement implements D1PreparedStatement {
  readonly owner: FaultyD1;
  readonly real: D1PreparedStatement;
  readonly sql: string;

  constructor(owner: FaultyD1, real: D1PreparedStatement, sql: string) {
    this.owner = owner;
    this.real = real;
    this.sql = sql;
  }

  bind(...values: unknown[]): D1PreparedStatement {
    return new FaultyStatement(this.owner, this.real.bind(...values), this.sql);
  }

  first<T = unknown>(colName: string): Promise<T | null>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  first<T>(colName?: string): Promise<T | null> {
    return this.owner.guard(this.sql, () =>
      colName === undefined ? this.real.first<T>() : this.real.first<T>(colName),
    );
  }

  run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.owner.guard(this.sql, () => this.real.run<T>());
  }

  all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.owner.guard(this.sql, () => this.real.all<T>());
  }

  raw<T = unknown[]>(options: { columnNames: true }): Promise<[string[], ...T[]]>;
  raw<T = unknown[]>(options?: { columnNames?: false }): Promise<T[]>;
  raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<[string[], ...T[]] | T[]> {
    return options?.columnNames === true
      ? this.owner.guard(this.sql, () => this.real.raw<T>({ columnNames: true }))
      : this.owner.guard(this.sql, () => this.real.raw<T>({ columnNames: false }));
  }
}

/**
 * The real D1 binding with the statements matching `plan.failOn` rejecting as D1 does
 * when its connection drops; everything else runs on the real database.
 *
 * @param db - the real binding (`env.DB`).
 * @param plan - `failOn` (SQL pattern), `times` (@default 1), `when` (@default 'before').
 * @returns a binding to pass as `DB`; its `injected` counts the failures.
 */
export function faultyD1(db: D1Database, plan: D1FaultPlan): FaultyD1 {
  return new FaultyD1(db, plan);
}

/** Options of {@link faultyQueue}. */
export interface QueueFaultPlan extends FaultPlan {
  /** Which producer calls fail. @default both */
  readonly failOn?: 'send' | 'sendBatch';
  /**
   * `throw`: the call rejects as Queues does when it is unavailable; `lose`: it resolves
   * but nothing is sent (the Worker died between the D1 write and the enqueue). @default 'throw'
   */
  readonly mode?: 'throw' | 'lose';
}

/** A Queue producer with injected failures; what did reach the queue is in `sent`. */
export interface FaultyQueue extends Queue {
  /** Bodies of the messages passed on to the real queue, in order. */
  readonly sent: unknown[];
  /** How many failures were injected so far. */
  readonly injected: number;
}

const NO_BACKLOG = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };

/**
 * The real Queue producer with `send`/`sendBatch` failing as planned; the calls that pass
 * go to the real queue and their bodies are recorded (so a test can run the consumer on
 * exactly those messages with `runQueue`).
 *
 * @param queue - the real producer (`env.DELIVERIES`).
 * @param plan - which calls fail, how often, and whether they throw or silently lose.
 *   @default no failure: a recording pass-through
 */
export function faultyQueue(queue: Queue, plan: QueueFaultPlan = { times: 0 }): FaultyQueue {
  const fault = new Fault(plan);
  const sent: unknown[] = [];
  const matches = (method: 'send' | 'sendBatch') => (plan.failOn ?? method) === method;
  const lost = () => new Error('Queue send failed: injected fault');
  // `lose` resolves like a send that was accepted, without sending anything.
  const call = async <T>(
    method: 'send' | 'sendBatch',
    bodies: unknown[],
    real: () => Promise<T>,
  ): Promise<T> => {
    const lose = plan.mode === 'lose';
    if (lose && fault.take(matches(method))) return NO_BACKLOG as T;
    const send = async () => {
      const result = await real();
      sent.push(...bodies);
      return result;
    };
    return fault.run(!lose && matches(method), send, lost);
  };
  return {
    sent,
    get injected() {
      return fault.injected;
    },
    metrics: () => queue.metrics(),
    send: (body, options) => call('send', [body], () => queue.send(body, options)),
    sendBatch: (messages, options) => {
      const list = [...messages];
      return call(
        'sendBatch',
        list.map((message) => message.body),
        () => queue.sendBatch(list, options),
      );
    },
  };
}

/** Options of {@link faultyKv}. */
export interface KvFaultPlan extends FaultPlan {
  /** The namespace methods that fail (`get`, `getWithMetadata`, `put`, ...). */
  readonly failOn: readonly (keyof KVNamespace)[];
}

/** A KV namespace with injected failures. */
export type FaultyKv = KVNamespace & { readonly injected: number };

/**
 * The real KV namespace with the methods of `plan.failOn` rejecting as KV does when it is
 * down or over quota; every other call is the real one.
 *
 * @param kv - the real namespace (`env.CACHE`).
 * @param plan - the failing methods, `times` (@default 1) and `when` (@default 'before').
 */
export function faultyKv(kv: KVNamespace, plan: KvFaultPlan): FaultyKv {
  const fault = new Fault(plan);
  const failing: readonly string[] = plan.failOn;
  return new Proxy(kv, {
    get: (target, name) => {
      if (name === 'injected') return fault.injected;
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) =>
        fault.run(
          typeof name === 'string' && failing.includes(name),
          () => method.apply(target, args),
          () => new Error(`KV ${String(name)} failed: 503 Service Unavailable (injected fault)`),
        );
    },
  }) as FaultyKv;
}

/** What the upstream does to a request picked by {@link UpstreamFaults.inject}. */
type UpstreamFault =
  /**
   * Answers `status`; with `processed` the request reached the upstream first (the response
   * is what got lost); with `retryAfter` the response carries that `Retry-After` value.
   */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly processed: boolean;
      readonly retryAfter?: string;
    }
  /** The upstream answers, then the connection closes after `afterBytes` bytes of the body. */
  | { readonly kind: 'cut-body'; readonly afterBytes: number }
  /**
   * The response comes `delayMs` late. With `processedLate` the request itself reaches the
   * upstream only then (held up on the way), else it is processed at once.
   */
  | { readonly kind: 'late'; readonly delayMs: number; readonly processedLate?: boolean };

/** Which requests of a request id a fault applies to. */
interface UpstreamMatch {
  /** @default any method */
  readonly method?: string;
  /** The URL path, exactly. @default any path */
  readonly path?: string;
  /** How many matching requests get the fault. @default 1 */
  readonly times?: number;
}

/** Faults on the Worker's outbound requests, keyed by `X-Request-Id`. */
export interface UpstreamFaults {
  /** Gives the next matching request(s) sent under `requestId` the `fault`. */
  inject(requestId: string, fault: UpstreamFault, match?: UpstreamMatch): void;
  /** How many requests got a fault so far. */
  readonly injected: number;
  /** Settles when every request held by a `late` fault has reached the upstream and been answered. */
  settled(): Promise<void>;
}

type FetchArgs = Parameters<typeof fetch>;

/**
 * Puts faults between the Worker and the sandbox, per request id: a spy on the global
 * `fetch` (which the gateway and its SDK client use) sends every request to the real
 * sandbox over HTTP and, for the requests picked with `inject`, answers an error status,
 * cuts the body, or answers late. Requests under other ids pass untouched, so tests in
 * other files running at the same time never see these faults. Restored by
 * `vi.restoreAllMocks()` (as `useCapturedLogs` does after each test).
 *
 * @returns the control of the faults.
 */
export function faultyUpstream(): UpstreamFaults {
  const original = globalThis.fetch.bind(globalThis);
  const planned = new Map<string, { fault: UpstreamFault; match: UpstreamMatch; left: number }[]>();
  const pending: Promise<unknown>[] = [];
  let injected = 0;

  const pick = (input: FetchArgs[0], init: FetchArgs[1]) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
    const id = headers.get('X-Request-Id');
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (
      init?.method ?? (input instanceof Request ? input.method : 'GET')
    ).toUpperCase();
    const entry = (id === null ? [] : (planned.get(id) ?? [])).find(
      ({ match, left }) =>
        left > 0 &&
        (match.method === undefined || match.method === method) &&
        (match.path === undefined || match.path === url.pathname),
    );
    if (entry === undefined) return undefined;
    entry.left--;
    injected++;
    return entry.fault;
  };

  const faulty = async (input: FetchArgs[0], init?: FetchArgs[1]): Promise<Response> => {
    const fault = pick(input, init);
    if (fault === undefined) return original(input, init);
    // The upstream keeps working after the gateway gave up: never tie it to the gateway's signal.
    const detached = { ...init, signal: null };
    switch (fault.kind) {
      case 'status': {
        if (fault.processed) await (await original(input, detached)).arrayBuffer();
        return Response.json(
          { status: 'error', message: 'Injected fault: bad gateway', code: 'internal_error' },
          {
            status: fault.status,
            headers: fault.retryAfter === undefined ? {} : { 'Retry-After': fault.retryAfter },
          },
        );
      }
      case 'cut-body': {
        const response = await original(input, detached);
        const bytes = new Uint8Array(await response.arrayBuffer());
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes.slice(0, fault.afterBytes));
            controller.error(new TypeError('Network connection lost (injected fault)'));
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      }
      case 'late': {
        const answer = (async () => {
          if (fault.processedLate === true) await sleep(fault.delayMs);
          const response = await original(input, detached);
          const body = await response.arrayBuffer();
          if (fault.processedLate !== true) await sleep(fault.delayMs);
          return new Response(body, { status: response.status, headers: response.headers });
        })();
        pending.push(answer.catch(() => undefined));
        return answer;
      }
    }
  };

  vi.spyOn(globalThis, 'fetch').mockImplementation(faulty);
  return {
    inject(requestId, fault, match = {}) {
      const list = planned.get(requestId) ?? [];
      list.push({ fault, match, left: match.times ?? 1 });
      planned.set(requestId, list);
    },
    get injected() {
      return injected;
    },
    async settled() {
      await Promise.all(pending);
    },
  };
}

/**
 * A timing fault rule of the sandbox (`POST /__sandbox/faults/rules`, docs/sandbox.md):
 * what the payment service does to the requests, or the records, naming `reference`.
 */
export interface SandboxFaultRule {
  readonly fault:
    | 'error'
    | 'error_then_commit'
    | 'drop_then_commit'
    | 'delay'
    | 'visible_after'
    | 'final_after'
    | 'webhook_early';
  /** Only requests and records naming this merchant reference (use one per test). */
  readonly reference?: string;
  /** `METHOD path` as in docs/endpoints.md, e.g. `GET /disbursements/verify/:reference`. */
  readonly route?: string;
  /** `error` / `error_then_commit`: the 5xx answered. @default 503 */
  readonly status?: number;
  /** Real milliseconds until the commit, the response, the record's visibility or final state. */
  readonly after_ms?: number;
  /** Request faults: how many matching requests. @default 1 */
  readonly times?: number;
}

/**
 * Adds a fault rule to a sandbox over HTTP. Rules accumulate and act only on what names
 * their reference, so tests in files running at the same time never see each other's.
 *
 * @param rule - the rule (a reference of the test's own, unless it is meant to be global).
 * @param sandboxUrl - which sandbox. @default inject('sandboxUrl')
 */
export async function addSandboxFault(
  rule: SandboxFaultRule,
  sandboxUrl: string = inject('sandboxUrl'),
): Promise<void> {
  const res = await fetch(`${sandboxUrl}/__sandbox/faults/rules`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status, await res.text()).toBe(200);
}

/**
 * The statuses the sandbox answered the POSTs sent under `requestId`, oldest first
 * (`null` for a connection it dropped): every send of a retried money POST, so a test can
 * count them and see which were refused.
 */
export async function sentStatuses(
  requestId: string,
  sandboxUrl: string = inject('sandboxUrl'),
): Promise<(number | null)[]> {
  return (await sandboxRequests(requestId, sandboxUrl))
    .filter((entry) => entry.method === 'POST')
    .map((entry) => entry.status);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `METHOD path` of every request that reached the sandbox under `requestId`, oldest
 * first: what the upstream saw, to prove nothing was sent twice.
 *
 * @param requestId - the id the test sent as `X-Request-Id` on every try.
 */
export async function upstreamCalls(requestId: string): Promise<string[]> {
  return (await sandboxRequests(requestId)).map((entry) => `${entry.method} ${entry.path}`);
}

/** A transfer (`POST /disbursements/initialize`) with a fresh merchant reference. */
function transferBody(): Record<string, unknown> {
  return {
    customer_name: 'Ada Obi',
    customer_email: 'ada@example.com',
    reference: `flt-${crypto.randomUUID()}`,
    amount: 7.25,
    currency: 'NGN',
    destination_bank_code: '058',
    destination_bank_account: '0123456789',
    destination_bank_name: 'GTBank',
  };
}

/** A JSON POST of the test caller under an explicit `Idempotency-Key` and `X-Request-Id`. */
function keyedPost(path: string, body: unknown, key: string, requestId: string): Request {
  return postJson(path, body, { requestId, headers: { 'Idempotency-Key': key } });
}

/** A request a caller sends and retries under one `Idempotency-Key` and one `X-Request-Id`. */
export interface RetriedRequest {
  readonly body: Record<string, unknown>;
  readonly key: string;
  readonly requestId: string;
  /** `POST path`, as {@link upstreamCalls} lists the send. */
  readonly sent: string;
  /** `GET` of the record's lookup, as {@link upstreamCalls} lists it (transfers only). */
  readonly lookup: string;
  /** Sends it (again) through the real Worker with `overrides`. */
  send(overrides?: Partial<Env>): Promise<Response>;
}

/**
 * A POST to retry, a transfer unless said otherwise: each {@link RetriedRequest.send} is
 * the same bytes, key and request id, so the sandbox's log under the id is every try.
 *
 * @param path - the money route. @default '/disbursements/initialize'
 * @param body - its body. @default a {@link transferBody}
 */
export function retriedRequest(
  path = '/disbursements/initialize',
  body: Record<string, unknown> = transferBody(),
): RetriedRequest {
  const key = crypto.randomUUID();
  const requestId = uniqueRequestId();
  return {
    body,
    key,
    requestId,
    sent: `POST ${path}`,
    lookup: `GET /disbursements/verify/${String(body.reference)}`,
    send: (overrides = {}) => fetchGateway(keyedPost(path, body, key, requestId), overrides),
  };
}
