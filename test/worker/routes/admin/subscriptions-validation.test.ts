/**
 * Validation of the admin API's subscription bodies: JSON only,
 * every issue with its path, the URL rules at `url`, and `ALLOW_LOCAL_SUBSCRIBERS`.
 */
import { describe, expect, it } from 'vitest';
import { errorBody, fetchGateway, useCapturedLogs } from '../../helpers.ts';
import { adminRequest, createSubscription } from './admin-helpers.ts';

useCapturedLogs();

async function expectIssues(res: Response, issues: { path: string; message: unknown }[]) {
  expect(res.status).toBe(400);
  const body = await errorBody(res);
  expect(body).toMatchObject({ status: 'error', code: 'validation_failed' });
  expect(body.issues).toEqual(issues);
}

const create = (json: unknown, overrides: Partial<Env> = {}) =>
  fetchGateway(adminRequest('POST', '/admin/subscriptions', { json }), overrides);

describe('admin subscriptions validation', () => {
  describe('POST /admin/subscriptions', () => {
    it('should require url', async () => {
      await expectIssues(await create({}), [{ path: 'url', message: 'Required' }]);
    });

    it('should list every issue with its path', async () => {
      const res = await create({
        url: 5,
        event_types: ['', 7],
        description: 1,
        enabled: 'yes',
        eventTypes: ['charge_success'],
      });
      await expectIssues(res, [
        { path: 'url', message: expect.stringContaining('Expected string') },
        { path: 'event_types.0', message: 'Expected a non-empty string' },
        { path: 'event_types.1', message: expect.stringContaining('Expected string') },
        { path: 'description', message: expect.stringContaining('Expected string') },
        { path: 'enabled', message: expect.stringContaining('Expected boolean') },
        { path: 'eventTypes', message: 'Unknown field' },
      ]);
    });

    it.each([
      ['an empty filter', { event_types: [] }, 'event_types', 'Expected at least one event type'],
      ['a too long event type', { event_types: ['x'.repeat(256)] }, 'event_types.0', 'at most 255'],
      ['a secret chosen by the caller', { secret: 'whsec_mine' }, 'secret', 'Unknown field'],
      ['a too long description', { description: 'x'.repeat(501) }, 'description', 'at most 500'],
      ['a too long url', { url: `https://e.com/${'x'.repeat(2048)}` }, 'url', 'at most 2048'],
    ])('should refuse %s', async (_, body, path, message) => {
      const res = await create({ url: 'https://hooks.example.com/', ...body });
      await expectIssues(res, [{ path, message: expect.stringContaining(message) }]);
    });

    it.each([
      ['http to a public host', 'http://hooks.example.com/', 'Expected an https URL'],
      ['a private address', 'https://10.0.0.8/', 'private address (10.0.0.0/8)'],
      ['a link-local address', 'https://169.254.1.1/', 'link-local'],
      ['a CGNAT address', 'https://100.64.1.1/', 'CGNAT'],
      ['a metadata address', 'http://169.254.169.254/', 'metadata'],
      ['a metadata host', 'https://metadata.google.internal/', 'metadata'],
      ['an IPv4-mapped private address', 'https://[::ffff:192.168.0.1]/', 'in an IPv6 form'],
      ['a unique local IPv6 address', 'https://[fd00::1]/', 'unique local'],
      ['credentials', 'https://u:p@hooks.example.com/', 'credentials'],
      ['loopback without ALLOW_LOCAL_SUBSCRIBERS', 'http://127.0.0.1:8789/', 'loopback'],
      ['not a URL', 'hooks', 'Expected an absolute URL'],
    ])('should refuse %s at url', async (_, url, message) => {
      await expectIssues(await create({ url }), [
        { path: 'url', message: expect.stringContaining(message) },
      ]);
    });

    it.each([
      'http://127.0.0.1:8789/hooks',
      'http://localhost:8789/hooks',
      'http://[::1]:8789/hooks',
    ])('should accept %s with ALLOW_LOCAL_SUBSCRIBERS on', async (url) => {
      const created = await createSubscription({ url }, { ALLOW_LOCAL_SUBSCRIBERS: 'true' });
      expect(created.url).toBe(url);
    });

    it('should still refuse private addresses with ALLOW_LOCAL_SUBSCRIBERS on', async () => {
      const res = await create({ url: 'http://192.168.1.1/' }, { ALLOW_LOCAL_SUBSCRIBERS: 'true' });
      await expectIssues(res, [{ path: 'url', message: expect.stringContaining('private') }]);
    });

    it('should answer 415 to a body that is not JSON', async () => {
      const res = await fetchGateway(
        adminRequest('POST', '/admin/subscriptions', {
          headers: { 'Content-Type': 'text/plain' },
          body: '{"url":"https://hooks.example.com/"}',
        }),
      );
      expect(res.status).toBe(415);
      expect(await errorBody(res)).toMatchObject({ code: 'unsupported_media_type' });
    });

    it.each([
      ['invalid JSON', '{"url":', 'Expected a valid JSON document'],
      ['an array', '[{"url":"https://hooks.example.com/"}]', 'Expected a JSON object'],
      ['null', 'null', 'Expected a JSON object'],
      ['no body', '', 'Expected a JSON object body'],
    ])('should answer 400 to %s', async (_, body, message) => {
      const res = await fetchGateway(
        adminRequest('POST', '/admin/subscriptions', {
          headers: { 'Content-Type': 'application/json' },
          body,
        }),
      );
      await expectIssues(res, [{ path: '', message }]);
    });

    it('should answer 413 past MAX_BODY_BYTES', async () => {
      const res = await create(
        { url: 'https://hooks.example.com/', description: 'x'.repeat(200) },
        {
          MAX_BODY_BYTES: '100',
        },
      );
      expect(res.status).toBe(413);
      expect(await errorBody(res)).toMatchObject({ code: 'payload_too_large' });
    });
  });

  describe('PATCH /admin/subscriptions/:id', () => {
    const patch = (id: string, json: unknown) =>
      fetchGateway(adminRequest('PATCH', `/admin/subscriptions/${id}`, { json }));

    it('should require at least one field', async () => {
      const { id } = await createSubscription();
      await expectIssues(await patch(id, {}), [
        {
          path: '',
          message:
            'Expected at least one of url, event_types, description, enabled, max_per_second, max_in_flight, ordered',
        },
      ]);
    });

    it('should apply the URL rules at url and change nothing', async () => {
      const created = await createSubscription();
      await expectIssues(await patch(created.id, { url: 'https://172.16.5.4/', enabled: false }), [
        { path: 'url', message: expect.stringContaining('private address (172.16.0.0/12)') },
      ]);
      const res = await fetchGateway(adminRequest('GET', `/admin/subscriptions/${created.id}`));
      expect(((await res.json()) as { data: unknown }).data).toMatchObject({
        url: created.url,
        enabled: true,
      });
    });

    it('should refuse a secret and list every issue', async () => {
      const { id } = await createSubscription();
      await expectIssues(await patch(id, { secret: 'whsec_mine', enabled: 1 }), [
        { path: 'enabled', message: expect.stringContaining('Expected boolean') },
        { path: 'secret', message: 'Unknown field' },
      ]);
    });

    it('should validate the body before looking up the id', async () => {
      await expectIssues(await patch('sub_missing', { url: 'ftp://x.example/' }), [
        { path: 'url', message: 'Expected an https URL' },
      ]);
    });
  });
});
