export default {
  async fetch(): Promise<Response> {
    return new Response('ok');
  },
} satisfies ExportedHandler<Env>;
