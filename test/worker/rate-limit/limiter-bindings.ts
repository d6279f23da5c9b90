/**
 * `RATE_LIMITER` bindings for the throttle tests, over the real Durable Object namespace:
 * one with a private set of objects (fresh counts, the gateway-wide budget of failed admin
 * sign-ins included, so a test that spends it throttles no other test), and one that fails
 * chosen calls as an unreachable object would. Pass them to the real Worker with
 * `fetchGateway(request, { RATE_LIMITER })`.
 */
import { env } from 'cloudflare:workers';
import type { CallerRateLimiter } from '../../../worker/rate-limit/caller-rate-limiter.ts';

type Limiter = DurableObjectNamespace<CallerRateLimiter>;
type LimiterStub = DurableObjectStub<CallerRateLimiter>;

/** The limiter methods the gateway calls. */
type LimiterMethod = 'take' | 'reserve' | 'release';

/** The limiter methods, each with the arguments it takes (the limit first). */
type LimiterCallArgs = Parameters<CallerRateLimiter[LimiterMethod]>;

/**
 * A stub of `real`'s object `name` whose every method goes through `wrap` first, with the
 * method's name and a call of the real method.
 */
function wrappedStub(
  real: Limiter,
  name: string,
  wrap: (method: LimiterMethod, args: LimiterCallArgs, call: () => Promise<unknown>) => unknown,
): Record<LimiterMethod, (...args: LimiterCallArgs) => unknown> {
  const stub = real.getByName(name) as unknown as Record<
    LimiterMethod,
    (...args: LimiterCallArgs) => Promise<unknown>
  >;
  const method =
    (which: LimiterMethod) =>
    (...args: LimiterCallArgs) =>
      wrap(which, args, () => stub[which](...args));
  return { take: method('take'), reserve: method('reserve'), release: method('release') };
}

/**
 * The real namespace, each object name prefixed with a fresh id: the same Durable Object
 * class and storage, but objects no other test reaches.
 */
export function privateLimiter(): Limiter {
  const prefix = `test-${crypto.randomUUID()}/`;
  const namespace = {
    getByName: (name: string): LimiterStub => env.RATE_LIMITER.getByName(`${prefix}${name}`),
  };
  return namespace as unknown as Limiter;
}

/**
 * A {@link privateLimiter} that counts the calls made to its objects; `calls` says how many
 * so far, by method.
 */
export function countingLimiter(): { binding: Limiter; calls: () => Record<string, number> } {
  const real = privateLimiter();
  const counts: Record<string, number> = {};
  const namespace = {
    getByName: (name: string) =>
      wrappedStub(real, name, (method, _args, call) => {
        counts[method] = (counts[method] ?? 0) + 1;
        return call();
      }),
  };
  return { binding: namespace as unknown as Limiter, calls: () => ({ ...counts }) };
}

/** Which limiter calls fail. */
export interface LimiterFaultPlan {
  /** The method that fails. */
  readonly method: LimiterMethod;
  /** The object names whose calls fail. */
  readonly failOn: RegExp;
  /** How many matching calls fail; later ones reach the object. @default Infinity */
  readonly times?: number;
}

/** A limiter binding with injected failures; `injected` says how many fired. */
export interface FaultyLimiter {
  readonly binding: Limiter;
  readonly injected: () => number;
}

/**
 * A {@link privateLimiter} whose matching calls reject without reaching the object, as
 * a call to an object that cannot be reached does; every other call reaches the real one.
 *
 * @param plan - which method fails on which object names.
 */
export function faultyLimiter(plan: LimiterFaultPlan): FaultyLimiter {
  const real = privateLimiter();
  const times = plan.times ?? Number.POSITIVE_INFINITY;
  let injected = 0;
  const namespace = {
    getByName: (name: string) =>
      wrappedStub(real, name, (method, _args, call) => {
        if (plan.method !== method || !plan.failOn.test(name) || injected >= times) {
          return call();
        }
        injected += 1;
        return Promise.reject(
          new Error(`Network connection lost. (injected fault on ${method} ${name})`),
        );
      }),
  };
  return { binding: namespace as unknown as Limiter, injected: () => injected };
}

/** One call the gateway made to a limiter object: the object's name and the limit asked. */
export interface LimiterCall {
  /** The object's name, as the gateway wrote it (without the private prefix). */
  readonly name: string;
  /** The limit per minute passed to the method. */
  readonly limit: number;
  readonly method: LimiterMethod;
}

/** A limiter binding that lists its calls; `calls` returns them, oldest first. */
export interface RecordingLimiter {
  readonly binding: Limiter;
  readonly calls: () => readonly LimiterCall[];
}

/**
 * A {@link privateLimiter} that lists every call the gateway makes (which object, which
 * limit); every call reaches the real object and answers what it answers.
 */
export function recordingLimiter(): RecordingLimiter {
  const real = privateLimiter();
  const calls: LimiterCall[] = [];
  const namespace = {
    getByName: (name: string) =>
      wrappedStub(real, name, (method, [limit], call) => {
        calls.push({ name, limit, method });
        return call();
      }),
  };
  return { binding: namespace as unknown as Limiter, calls: () => [...calls] };
}
