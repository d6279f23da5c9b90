// The floor of the relay benchmark (bench/relay.ts): a Worker that answers 200 to
// everything, with no verification, validation or storage.
export default {
  async fetch(): Promise<Response> {
    return new Response('{"status":"success"}', {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  },
};
