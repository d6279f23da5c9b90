import type { Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlabelledControls } from '../support/browser.ts';
import {
  type ConsolePageStack,
  DESKTOP,
  expectRefused,
  startConsoleStack,
} from '../support/console-stack.ts';

// The console's bulk recovery on the Deliveries page, in a real Chromium under the machine's
// own locale (none forced), against `npm start`'s stack on ports of its own: deliveries left
// failing by a subscriber answering 500, a preview of how many a filter matches (and how many
// a job would skip, their subscription disabled), the job started and followed until done,
// the deliveries' new attempts marked as a recovery on the event page, a second start with
// the same filter while the job runs answering that job, and the jobs listed again after a
// reload. The tests run in order and build on each other. Screenshots go to
// test-results/console-recover/.
const PORTS = { gateway: 18917, sandbox: 18918, receiver: 18919 };
/** The longest any one wait may take, in milliseconds. */
const WAIT_MS = 30_000;
/** Events sent; each gets one delivery per subscription below. */
const EVENTS = 3;
const OPERATOR = 'Ada Lovelace';

let stack: ConsolePageStack;
let page: Page;

beforeAll(async () => {
  stack = await startConsoleStack(PORTS, {
    waitMs: WAIT_MS,
    artifacts: 'console-recover',
  });
  page = stack.page;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function received(key: string): Promise<number> {
  return (await stack.received(key)).length;
}

/** The attempts of each of a subscription's deliveries (of these events). */
async function attemptsOf(subscriptionId: string): Promise<number[]> {
  const { body } = await stack.admin('GET', `/admin/deliveries?subscription_id=${subscriptionId}`);
  return (body.data as { attempts: number }[]).map((delivery) => delivery.attempts);
}

async function openDeliveries(): Promise<void> {
  await page.goto(`${stack.gatewayUrl}/console/#/deliveries`);
  await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
}

/** `2026-11-27 08:00`: a minute-precision time in UTC, as the console's time fields take it. */
function utcField(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

const DOWN_KEY = 'recover-down';
const OFF_KEY = 'recover-off';
/** A minute before the events, so the filter's `since` (minute precision) takes them all. */
const since = Date.now() - 60_000;
let downId: string;
let downUrl: string;
let offId: string;
const eventIds: string[] = [];

describe('console: bulk recovery on the deliveries page', () => {
  it('should sign in', async () => {
    await stack.signIn(page);
  });

  it('should leave deliveries failing while their subscribers answer 500', async () => {
    await stack.receiverAnswers(DOWN_KEY, 500);
    await stack.receiverAnswers(OFF_KEY, 500);
    downUrl = `${stack.receiver.url}/webhooks?key=${DOWN_KEY}`;
    const types = ['mandate_activated'];
    const down = await stack.admin('POST', '/admin/subscriptions', {
      url: downUrl,
      event_types: types,
    });
    const off = await stack.admin('POST', '/admin/subscriptions', {
      url: `${stack.receiver.url}/webhooks?key=${OFF_KEY}`,
      event_types: types,
    });
    expect([down.status, off.status]).toEqual([201, 201]);
    downId = down.body.data.id;
    offId = off.body.data.id;
    for (let n = 0; n < EVENTS; n++) {
      // Not a money event: stored `received` and fanned out at once, without a check.
      const eventId = `evt_recover_${Date.now()}_${n}`;
      await stack.ingest({
        event_type: 'mandate_activated',
        event_id: eventId,
        timestamp: new Date().toISOString(),
        data: { reference: `mandate-recover-${n}` },
      });
      eventIds.push(eventId);
    }
    // The first attempt and the retry 5 s later fail; the next retry is 5 minutes away, so
    // only a recovery can deliver them within this test.
    for (const id of [downId, offId]) {
      await expect
        .poll(() => attemptsOf(id), { timeout: WAIT_MS, interval: 500 })
        .toEqual([2, 2, 2]);
    }
    expect(await received(DOWN_KEY)).toBe(EVENTS * 2);
    // One subscription turned off by an operator: a recovery skips its deliveries.
    expect(
      (await stack.admin('PATCH', `/admin/subscriptions/${offId}`, { enabled: false })).status,
    ).toBe(200);
  }, 60_000);

  it('should read its times as 24-hour text in the zone the labels name, and send nothing for text that is not a time', async () => {
    await openDeliveries();
    const sinceField = page.getByLabel('Created from (UTC)', { exact: true });
    const untilField = page.getByLabel('Created before (UTC)', { exact: true });
    expect(await sinceField.getAttribute('type')).toBe('text');
    expect(await untilField.getAttribute('placeholder')).toBe('YYYY-MM-DD HH:MM');
    await sinceField.fill('2026-11-24 21:30');
    try {
      await expectRefused(page, {
        field: untilField,
        text: 'tomorrow',
        submit: 'Preview',
        message:
          'Created before: "tomorrow" is not a time. Write it as YYYY-MM-DD HH:MM (seconds optional), in UTC.',
        // The page reads the job list (GET) on its own; a preview or a start is a POST.
        carries: (request) =>
          request.method() === 'POST' &&
          new URL(request.url()).pathname.startsWith('/admin/deliveries/recover'),
      });

      // 21:30 is read on the 24-hour clock, in UTC, as the labels say.
      await untilField.fill('2026-11-25 13:05:30');
      expect(await page.locator('.field-error').count()).toBe(0);
      const previewed = page.waitForRequest((request) =>
        request.url().endsWith('/admin/deliveries/recover/preview'),
      );
      await page.getByRole('button', { name: 'Preview' }).click();
      expect(JSON.parse((await previewed).postData() ?? '{}')).toMatchObject({
        since: '2026-11-24T21:30:00.000Z',
        until: '2026-11-25T13:05:30.000Z',
      });
      await page.getByRole('status').getByText('0 deliveries match.').waitFor();
    } finally {
      await untilField.fill('');
    }
  });

  it('should preview how many deliveries match, and how many would be skipped', async () => {
    await openDeliveries();
    await page.getByLabel('Created from (UTC)').fill(utcField(since));
    await page
      .getByLabel('Deliveries', { exact: true })
      .selectOption({ label: 'failed and pending' });
    await page.getByLabel('Event type', { exact: true }).selectOption('mandate_activated');
    await page.getByLabel('Your name (recorded with the recovery)').fill(OPERATOR);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page
      .getByRole('status')
      .getByText(
        `${EVENTS * 2} deliveries match; ${EVENTS} of them would be skipped (subscription disabled or deleted).`,
      )
      .waitFor();
    // A narrower filter counts again: only the failing subscriber's.
    await page.getByLabel('Subscription', { exact: true }).selectOption(downId);
    expect(await page.getByRole('button', { name: 'Start recovery' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('status').getByText(`${EVENTS} deliveries match.`).waitFor();
    await page.getByLabel('Subscription', { exact: true }).selectOption('');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page
      .getByRole('status')
      .getByText(`${EVENTS * 2} deliveries match;`)
      .waitFor();
    await stack.screenshot('preview');
  });

  it('should start the job, answer the running job to a second start, and follow it to done', async () => {
    await stack.receiverAnswers(DOWN_KEY, 200);
    const started = page.waitForResponse(
      (response: Response) =>
        response.url().endsWith('/admin/deliveries/recover') &&
        response.request().method() === 'POST',
    );
    const start = page.getByRole('button', { name: 'Start recovery' });
    expect(await start.getAttribute('class')).toContain('primary');
    await start.click();
    const answer = await started;
    expect(answer.status()).toBe(202);
    const job = ((await answer.json()) as { data: { id: string; state: string } }).data;
    // The same filter again at once, as a second operator or a retried request would send
    // it: the job waits for its first queue message (the batch timeout is 1 s), so it still
    // runs, and the answer is that job, not a second one.
    const again = await stack.admin(
      'POST',
      '/admin/deliveries/recover',
      JSON.parse(answer.request().postData() ?? '{}'),
    );
    expect(again.status).toBe(202);
    expect(again.body.data.id).toBe(job.id);

    const row = page.locator(`tr[data-job="${job.id}"]`);
    await row.getByText('done', { exact: true }).waitFor();
    expect(await row.locator('td[data-label="Matched"]').textContent()).toBe(String(EVENTS * 2));
    expect(await row.locator('td[data-label="Enqueued"]').textContent()).toBe(String(EVENTS));
    expect(await row.locator('td[data-label="Skipped"]').textContent()).toBe(String(EVENTS));
    expect(await row.locator('td[data-label="By"]').textContent()).toBe(OPERATOR);
    expect(await page.locator('tr[data-job]').count()).toBe(1);
    await stack.screenshot('recovered');

    // Each failing delivery got exactly one more attempt, which delivered it; the turned-off
    // subscription's got none.
    await expect.poll(() => attemptsOf(downId), { timeout: WAIT_MS }).toEqual([3, 3, 3]);
    expect(await received(DOWN_KEY)).toBe(EVENTS * 3);
    expect(await attemptsOf(offId)).toEqual([2, 2, 2]);
    expect(await received(OFF_KEY)).toBe(EVENTS * 2);
  });

  it('should mark the new attempts as a recovery on the event page', async () => {
    await page.goto(
      `${stack.gatewayUrl}/console/#/events/${encodeURIComponent(eventIds[0] ?? '')}`,
    );
    const delivery = page.getByRole('region', { name: `Delivery to ${downUrl}` });
    await delivery.getByText('delivered after 3 attempts', { exact: true }).waitFor();
    const attempts = delivery.getByRole('listitem');
    expect(await attempts.count()).toBe(3);
    await attempts.nth(2).getByText(`manual recovery by ${OPERATOR}`, { exact: true }).waitFor();
    expect(
      await attempts
        .nth(1)
        .getByText(/^manual /)
        .count(),
    ).toBe(0);
    await stack.screenshot('event-recovered');
  });

  it('should list the job again after a reload, and fit 375 px with every control labelled', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await openDeliveries();
      await page.reload();
      const rows = page.locator('tr[data-job]');
      await rows.first().getByText('done', { exact: true }).waitFor();
      expect(await rows.count()).toBe(1);
      await rows
        .first()
        .getByText(/^failed and pending, created from \d{4}-\d{2}-\d{2} /)
        .waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      expect(await unlabelledControls(page)).toEqual([]);
      await stack.screenshot('narrow-deliveries');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('should have logged no console error', () => {
    expect(stack.browser.problems).toEqual([]);
  });
});
