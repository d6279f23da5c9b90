import type { IRequest } from 'itty-router';
import type { RequestContext } from '../http/context.ts';
import type { ProxyRoute } from '../routes/route.ts';

/** One proxied request as the pipeline stages see it. */
export interface ProxyExchange {
  /** The incoming request (headers; its body was already read into `body`). */
  readonly request: IRequest;
  readonly env: Env;
  readonly context: RequestContext;
  /** The matched route. */
  readonly route: ProxyRoute;
  /** Upstream path: the route pattern with the segments as received. */
  readonly path: string;
  /** The query string as received, with its `?` (or `''`). */
  readonly search: string;
  /** The exact body bytes as received; `undefined` for GET and HEAD. */
  readonly body: Uint8Array | undefined;
  /**
   * The request's `ctx.waitUntil`: work handed to it runs after the caller has the
   * answer (the stored answer of an idempotency key); the platform may cut it short.
   */
  readonly waitUntil: (work: Promise<unknown>) => void;
  /**
   * The body as the validation stage accepted it, parsed once there and read by every
   * later stage (as hono's `c.req.valid('json')`); absent before that stage, for GET and
   * HEAD, and for an empty body on a body-less route.
   */
  content?: ValidBody | undefined;
  /**
   * The query string as the validation stage accepted it (the route schema's output,
   * defaults filled in), read by later stages; absent before that stage and on routes
   * without a query schema.
   */
  query?: ValidQuery | undefined;
}

/** A query string that passed validation: the route schema's output (always an object). */
export type ValidQuery = Readonly<Record<string, unknown>>;

/** A request body that passed validation: its UTF-8 text and the route schema's output. */
export interface ValidBody {
  readonly text: string;
  /** The schema's output: always an object (a body must be a JSON object). */
  readonly value: Readonly<Record<string, unknown>>;
}

/** Calls the rest of the pipeline. */
export type ProxyNext = () => Promise<Response>;

/**
 * A stage of the proxy pipeline: it may answer itself (validation error, cached or
 * replayed response) or call `next` and look at or store the response (idempotency,
 * caching). Stages are chosen per route from the route's data.
 */
export type ProxyStage = (exchange: ProxyExchange, next: ProxyNext) => Promise<Response>;

/** The last step of the pipeline: sends the exchange upstream. */
export type ProxyTerminal = (exchange: ProxyExchange) => Promise<Response>;

/**
 * Composes stages around a terminal, outermost first (like Koa/Hono middleware).
 *
 * @param stages - run in order; each decides whether to call `next`.
 * @param terminal - runs when the last stage calls `next`.
 * @returns a function running the whole pipeline for one exchange.
 * @throws {Error} at run time when a stage calls `next` twice.
 *
 * @example
 * ```ts
 * const run = composeStages([validate, idempotency], forward);
 * const response = await run(exchange);
 * ```
 */
export function composeStages(
  stages: readonly ProxyStage[],
  terminal: ProxyTerminal,
): (exchange: ProxyExchange) => Promise<Response> {
  return (exchange) => {
    let last = -1;
    const dispatch = (index: number): Promise<Response> => {
      if (index <= last) return Promise.reject(new Error('A proxy stage called next() twice'));
      last = index;
      const stage = stages[index];
      if (stage === undefined) return terminal(exchange);
      return stage(exchange, () => dispatch(index + 1));
    };
    return dispatch(0);
  };
}
