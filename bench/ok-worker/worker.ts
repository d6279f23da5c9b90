// The floor of the relay benchmark (bench/relay.ts): a Worker that answers 200 to
// everything, with no verification, validation or storage, and writes the gateway's
// access-log line per request as the relay does.
import { logLikeGateway } from '../floor-log.ts';

export default {
  async fetch(request: Request): Promise<Response> {
    const started = Date.now();
    // The relay reads the body it verifies; so does the floor, to be answered alike.
    await request.arrayBuffer();
    logLikeGateway(request, 200, started);
    return new Response('{"status":"success"}', {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  },
};
