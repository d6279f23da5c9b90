// The Worker of the rate limiter benchmark (bench/limiter.ts): GET /takes?objects=K&takes=N&lanes=C
// sends N `take` calls, C at a time, dealt in turn over K fresh objects of the gateway's
// limiter class (each asked with a limit it never reaches, so every call is allowed and
// writes its state, as an allowed request does), and answers how long they took.
import type { CallerRateLimiter } from '../../worker/rate-limit/caller-rate-limiter.ts';

export { CallerRateLimiter } from '../../worker/rate-limit/caller-rate-limiter.ts';

interface BenchEnv {
  readonly RATE_LIMITER: DurableObjectNamespace<CallerRateLimiter>;
}

// Far above any run's takes: nothing is refused, so every call counts and stores.
const NEVER_REACHED_PER_MINUTE = 1_000_000;

function wholeParam(url: URL, name: string, fallback: number, max: number): number {
  const value = Number(url.searchParams.get(name) ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be a whole number from 1 to ${max}`);
  }
  return value;
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    // Any other path answers at once: the harness polls `/` until wrangler dev is ready.
    if (url.pathname !== '/takes') return new Response('ok');
    const objects = wholeParam(url, 'objects', 1, 64);
    const takes = wholeParam(url, 'takes', 500, 900);
    const lanes = wholeParam(url, 'lanes', 32, 128);
    const run = crypto.randomUUID();
    const stubs = Array.from({ length: objects }, (_, index) =>
      env.RATE_LIMITER.getByName(`bench/${run}/${index}`),
    );
    // Each object created and warm before the clock starts: the figure is steady state.
    await Promise.all(stubs.map((stub) => stub.take(NEVER_REACHED_PER_MINUTE)));
    let next = 0;
    let refused = 0;
    const lane = async () => {
      while (next < takes) {
        const index = next;
        next += 1;
        const decision = await stubs[index % objects]?.take(NEVER_REACHED_PER_MINUTE);
        if (decision?.allowed !== true) refused += 1;
      }
    };
    // The clock advances across I/O in a Worker: each read follows a round of calls.
    const started = Date.now();
    await Promise.all(Array.from({ length: lanes }, lane));
    const elapsedMs = Date.now() - started;
    return Response.json({ objects, takes, lanes, elapsedMs, refused });
  },
};
