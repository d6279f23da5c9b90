// The floor of the gateway benchmark: a Worker that forwards every request unchanged to
// the same upstream, with no auth, validation, signing or storage.
interface PassthroughEnv {
  UPSTREAM_BASE_URL: string;
}

export default {
  async fetch(request: Request, env: PassthroughEnv): Promise<Response> {
    const url = new URL(request.url);
    const upstream = await fetch(`${env.UPSTREAM_BASE_URL}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === 'GET' ? null : await request.arrayBuffer(),
    });
    return new Response(await upstream.arrayBuffer(), {
      status: upstream.status,
      headers: upstream.headers,
    });
  },
};
