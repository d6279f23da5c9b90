// The floor of the gateway benchmark: a Worker that forwards every request unchanged to
// the same upstream, with no auth, validation, signing or storage. With LOG_LINE=true it
// also writes one access-log line per request, shaped like the gateway's, so the cost of
// that line under `wrangler dev` can be told apart from the gateway's own work.
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
    if (env.LOG_LINE === 'true') {
      console.info(
        JSON.stringify({
          level: 'info',
          event: 'request',
          request_id: request.headers.get('X-Request-Id') ?? crypto.randomUUID(),
          caller: null,
          method: request.method,
          route: url.pathname,
          status: upstream.status,
          upstream_status: upstream.status,
          error_code: null,
          idempotency: null,
          cache: null,
          latency_ms: Date.now() - started,
        }),
      );
    }
    return new Response(body, { status: upstream.status, headers: upstream.headers });
  },
};
