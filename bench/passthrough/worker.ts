// The floor of the gateway benchmark: a Worker that forwards every request unchanged to
// the same upstream, with no auth, validation, signing or storage. With LOG_LINE=true it
// also writes the gateway's access-log line per request, with the gateway's own code:
// that is the reference the gateway is held to; without it, an informational bare floor.
import { logLikeGateway } from '../floor-log.ts';

interface PassthroughEnv {
  UPSTREAM_BASE_URL: string;
  LOG_LINE?: string;
}

export default {
  async fetch(request: Request, env: PassthroughEnv): Promise<Response> {
    const started = Date.now();
    const url = new URL(request.url);
    const upstream = await fetch(`${env.UPSTREAM_BASE_URL}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === 'GET' ? null : await request.arrayBuffer(),
    });
    const body = await upstream.arrayBuffer();
    if (env.LOG_LINE === 'true') logLikeGateway(request, upstream.status, started);
    return new Response(body, { status: upstream.status, headers: upstream.headers });
  },
};
