import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../../worker/http/context.ts';
import {
  composeStages,
  type ProxyExchange,
  type ProxyStage,
} from '../../../worker/proxy/pipeline.ts';
import { PROXY_ROUTES } from '../../../worker/routes/table.ts';
import { gatewayRequest } from '../helpers.ts';

function exchange(): ProxyExchange {
  const route = PROXY_ROUTES[0];
  if (route === undefined) throw new Error('empty route table');
  const context: RequestContext = {
    requestId: 'r',
    startedAt: 0,
    caller: 'test',
    routeName: route.name,
    upstreamStatus: undefined,
    errorCode: undefined,
    idempotency: undefined,
    cache: undefined,
  };
  return {
    request: Object.assign(gatewayRequest('/payments/initialize'), {
      route: route.pattern,
      params: {},
      query: {},
    }),
    env,
    context,
    route,
    path: '/payments/initialize',
    search: '',
    body: undefined,
    // No stage of these tests defers work.
    waitUntil: () => undefined,
  };
}

function tracing(name: string, trace: string[]): ProxyStage {
  return async (_, next) => {
    trace.push(`${name}:before`);
    const response = await next();
    trace.push(`${name}:after`);
    return response;
  };
}

describe('proxy pipeline', () => {
  describe('composeStages', () => {
    it('should run the terminal alone when there are no stages', async () => {
      const run = composeStages([], async () => new Response('terminal'));
      expect(await (await run(exchange())).text()).toBe('terminal');
    });

    it('should run stages outermost first around the terminal', async () => {
      const trace: string[] = [];
      const run = composeStages([tracing('a', trace), tracing('b', trace)], async () => {
        trace.push('terminal');
        return new Response('ok');
      });
      await run(exchange());
      expect(trace).toEqual(['a:before', 'b:before', 'terminal', 'b:after', 'a:after']);
    });

    it('should let a stage answer without calling the terminal', async () => {
      const trace: string[] = [];
      const run = composeStages(
        [async () => new Response('short', { status: 400 }), tracing('b', trace)],
        async () => {
          trace.push('terminal');
          return new Response('ok');
        },
      );
      const res = await run(exchange());
      expect(res.status).toBe(400);
      expect(trace).toEqual([]);
    });

    it('should reject a stage calling next twice', async () => {
      const run = composeStages(
        [
          async (_, next) => {
            await next();
            return next();
          },
        ],
        async () => new Response('ok'),
      );
      await expect(run(exchange())).rejects.toThrow('called next() twice');
    });
  });
});
