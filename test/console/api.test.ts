import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdminApi, ApiError, path } from '../../console/src/api.ts';

/** Stubs `fetch` with one response and records the requests made. */
function answer(status: number, body: string | null, headers: Record<string, string> = {}) {
  const requests: Request[] = [];
  vi.stubGlobal('fetch', async (input: string, init: RequestInit) => {
    requests.push(new Request(new URL(input, 'http://gateway.test'), init));
    return new Response(body, { status, headers });
  });
  return requests;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('console admin API client', () => {
  describe('path', () => {
    it('should encode each interpolated value as one segment', () => {
      expect(path`/admin/events/${'evt/1?x'}/replay`).toBe('/admin/events/evt%2F1%3Fx/replay');
    });
  });

  describe('AdminApi', () => {
    it('should send the admin token as a bearer token and return the data', async () => {
      const requests = answer(200, JSON.stringify({ status: 'success', data: { pending: 1 } }));
      const counts = await new AdminApi('the-token').countDeliveries();
      expect(counts).toEqual({ pending: 1 });
      expect(requests[0]?.headers.get('Authorization')).toBe('Bearer the-token');
      expect(requests[0]?.url).toBe('http://gateway.test/admin/deliveries/counts');
    });

    it('should leave empty filters out of the query string and return the next cursor', async () => {
      const requests = answer(
        200,
        JSON.stringify({ status: 'success', data: [], next_cursor: 'c2' }),
      );
      const page = await new AdminApi('t').listEvents({
        status: 'unconfirmed',
        event_type: '',
        cursor: 'c1',
      });
      expect(page).toEqual({ data: [], next_cursor: 'c2' });
      expect(new URL(requests[0]?.url ?? '').search).toBe('?status=unconfirmed&cursor=c1');
    });

    it('should send a JSON body on writes', async () => {
      const requests = answer(
        202,
        JSON.stringify({ status: 'success', data: { delivery_ids: ['d1'] } }),
      );
      await new AdminApi('t').replayEvent('evt 1', { force: true, operator: 'ops' });
      expect(requests[0]?.method).toBe('POST');
      expect(requests[0]?.url).toBe('http://gateway.test/admin/events/evt%201/replay');
      expect(requests[0]?.headers.get('Content-Type')).toBe('application/json');
      expect(await requests[0]?.json()).toEqual({ force: true, operator: 'ops' });
    });

    it('should accept a 204 without a body', async () => {
      answer(204, null);
      await expect(new AdminApi('t').deleteSubscription('sub_1')).resolves.toBeUndefined();
    });

    it("should throw the API's message, code, issues and request id", async () => {
      const body = {
        status: 'error',
        message: 'The request body is invalid',
        code: 'validation_failed',
        issues: [{ path: 'url', message: 'Not allowed: private address (10.0.0.0/8)' }],
        request_id: 'req-1',
      };
      answer(400, JSON.stringify(body), { 'X-Request-Id': 'req-1' });
      const error = await new AdminApi('t')
        .createSubscription({
          url: 'http://10.0.0.1/',
          event_types: null,
          description: null,
          enabled: true,
          max_per_second: null,
          max_in_flight: null,
          ordered: false,
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        message: body.message,
        status: 400,
        code: 'validation_failed',
        issues: body.issues,
        requestId: 'req-1',
      });
    });

    it('should call onUnauthorized on a 401 before throwing', async () => {
      answer(
        401,
        JSON.stringify({ status: 'error', message: 'Invalid admin token', code: 'unauthorized' }),
      );
      const onUnauthorized = vi.fn();
      await expect(new AdminApi('t', onUnauthorized).listSubscriptions()).rejects.toThrow(
        'Invalid admin token',
      );
      expect(onUnauthorized).toHaveBeenCalledWith(expect.objectContaining({ status: 401 }));
    });

    it('should name the request when the answer is not the error body', async () => {
      answer(502, '<html>Bad gateway</html>');
      await expect(new AdminApi('t').getEvent('e1')).rejects.toMatchObject({
        message: 'GET /admin/events/e1 answered HTTP 502',
        code: 'unexpected_answer',
      });
    });

    it('should say the gateway did not answer when fetch fails', async () => {
      vi.stubGlobal('fetch', async () => {
        throw new TypeError('Failed to fetch');
      });
      await expect(new AdminApi('t').countDeliveries()).rejects.toMatchObject({
        status: 0,
        code: 'network_error',
        message: 'The gateway did not answer GET /admin/deliveries/counts',
      });
    });
  });
});
