/**
 * What the caller of the gateway waits for: the idempotency keys' objects wrapped so that
 * the calls of one kind wait at a gate the test opens (or never opens: the isolate died
 * before the write reached the object), with every call logged by name when it ends; an
 * ExecutionContext whose `waitUntil` keeps or drops the work handed to it; and the real
 * Worker's fetch, which marks `answer` in the same log when its response resolves.
 */
import { env } from 'cloudflare:workers';
import worker from '../../../worker/index.ts';
import type { IdempotencyKeys } from '../../../worker/objects/idempotency-keys.ts';
import { findIdempotencyKey, hookedKeys, type KeyCall } from '../idempotency-keys.ts';

/** How the held calls end when the gate opens. */
type GateOpening = 'land' | 'fail';

/** The `IDEMPOTENCY_KEYS` namespace with one kind of call held; see {@link heldKeys}. */
export interface HeldKeys {
  /** The namespace to hand the Worker. */
  readonly namespace: DurableObjectNamespace<IdempotencyKeys>;
  /** Calls by name (`claim`, `complete`, `lock`, `release`) in the order they ended, and the marks. */
  readonly log: string[];
  /** Resolves once a held call waits at the gate. */
  readonly held: Promise<void>;
  /** Opens the gate: the held calls run (`land`) or reject as a dropped connection does (`fail`). */
  release(how: GateOpening): void;
}

/**
 * The real objects with the calls named `hold` waiting until `release`, and every call
 * logged as it ends.
 *
 * @param hold - the calls to hold (`undefined`: none, only the log).
 */
export function heldKeys(hold?: KeyCall): HeldKeys {
  const log: string[] = [];
  let open: (how: GateOpening) => void = () => undefined;
  let markHeld: () => void = () => undefined;
  const gate = new Promise<GateOpening>((resolve) => {
    open = resolve;
  });
  const held = new Promise<void>((resolve) => {
    markHeld = resolve;
  });
  const namespace = hookedKeys(async (call, run) => {
    if (call === hold) {
      markHeld();
      if ((await gate) === 'fail') {
        log.push(`${call} failed`);
        throw new Error(`Network connection lost (held ${call} failed)`);
      }
    }
    try {
      return await run();
    } finally {
      log.push(call);
    }
  });
  return { namespace, log, held, release: (how) => open(how) };
}

/** An ExecutionContext of the test's own: what `waitUntil` was given, kept or dropped. */
interface TestContext {
  readonly ctx: ExecutionContext;
  /** How many promises `waitUntil` was given. */
  readonly handed: () => number;
  /** Settles when every kept promise has (the `drop` context keeps none). */
  settled(): Promise<void>;
}

/**
 * An ExecutionContext whose `waitUntil` keeps the work (`keep`, then awaited by
 * `settled`) or drops it (`drop`: the isolate dies once the answer is out, as the platform
 * may end it; nothing waits for that work).
 */
export function testContext(mode: 'keep' | 'drop'): TestContext {
  const kept: Promise<unknown>[] = [];
  let handed = 0;
  const ctx = {
    waitUntil(work: Promise<unknown>) {
      handed++;
      if (mode === 'keep') kept.push(work.catch(() => undefined));
    },
    passThroughOnException() {},
    props: {},
  } as unknown as ExecutionContext;
  return {
    ctx,
    handed: () => handed,
    async settled() {
      await Promise.all(kept);
    },
  };
}

/** A request to the real Worker, running: its response, and whether it has resolved yet. */
interface Running {
  readonly response: Promise<Response>;
  answered(): boolean;
}

/**
 * Calls the real Worker's fetch with `keys` as `IDEMPOTENCY_KEYS` and the test's own `ctx`,
 * not waiting: `answer` is marked in `keys.log` when the response resolves.
 */
export function startGateway(
  request: Request,
  keys: HeldKeys,
  context: TestContext,
  overrides: Partial<Env> = {},
): Running {
  let answered = false;
  const incoming = request as Request<unknown, IncomingRequestCfProperties>;
  const response = Promise.resolve(
    worker.fetch(incoming, { ...env, ...overrides, IDEMPOTENCY_KEYS: keys.namespace }, context.ctx),
  ).then((res) => {
    answered = true;
    keys.log.push('answer');
    return res;
  });
  return { response, answered: () => answered };
}

/**
 * Whether `running` was answered while a call waits at `keys`' gate: waits until one is
 * held, then for one round trip of its own to an object (an answer that needs no more I/O
 * has resolved by then: pending promise callbacks all run before any I/O completes).
 */
export async function answeredWhileHeld(keys: HeldKeys, running: Running): Promise<boolean> {
  await keys.held;
  await findIdempotencyKey('held-keys-probe', 'probe');
  return running.answered();
}
