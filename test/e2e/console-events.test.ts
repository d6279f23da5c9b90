import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlabelledControls } from '../support/browser.ts';
import {
  type ConsolePageStack,
  DESKTOP,
  expectRefused,
  startConsoleStack,
} from '../support/console-stack.ts';

// The console's Events and Event pages in a real Chromium started under LANG=C.UTF-8 (a
// locale the project does not choose), against `npm start`'s stack on ports of its own: the
// delivery outcome column and filter, prefix search on reference and event id, the amount of
// a money event, copy buttons, "failed, next attempt in 4 min", a manual retry marked as
// such, and a held event's confirmation reason and next check. The tests run in order and
// build on each other. Screenshots go to test-results/console-events/.
const PORTS = { gateway: 18877, sandbox: 18878, receiver: 18879 };
/** The longest any one wait in the page may take, in milliseconds. */
const WAIT_MS = 20_000;
/** The subscriber's `Retry-After`, in seconds: its next attempt is about 4 minutes away. */
const RETRY_AFTER_S = 250;

let stack: ConsolePageStack;
let page: Page;

beforeAll(async () => {
  stack = await startConsoleStack(PORTS, {
    browser: { lang: 'C.UTF-8' },
    waitMs: WAIT_MS,
    artifacts: 'console-events',
  });
  page = stack.page;
  // What the copy buttons hand to the clipboard, recorded (the page's Permissions-Policy
  // forbids reading the clipboard back).
  await page.context().grantPermissions(['clipboard-write']);
  await page.addInitScript(() => {
    const copied: string[] = [];
    Object.assign(window, { copiedTexts: copied });
    const write = navigator.clipboard.writeText.bind(navigator.clipboard);
    navigator.clipboard.writeText = (text: string) => {
      copied.push(text);
      return write(text);
    };
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Sets the event list's filters through the form and applies them. */
async function filterEvents(filters: {
  delivery?: string;
  reference?: string;
  eventId?: string;
}): Promise<void> {
  await page.goto(`${stack.gatewayUrl}/console/#/events`);
  await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
  await page.getByLabel('Delivery', { exact: true }).selectOption(filters.delivery ?? '');
  await page.getByLabel('Reference', { exact: true }).fill(filters.reference ?? '');
  await page.getByLabel('Event id', { exact: true }).fill(filters.eventId ?? '');
  await page.getByRole('button', { name: 'Apply filters' }).click();
}

function rowOf(text: string): Locator {
  return page.getByRole('row').filter({ hasText: text });
}

const FLAKY_KEY = 'events-flaky';
let flakyUrl: string;
let reference: string;
let eventId: string;

describe('console: events and event pages', () => {
  it('should sign in', async () => {
    await stack.signIn(page);
  });

  it('should show a failing money event with its amount, found by its outcome and by prefixes', async () => {
    await stack.receiverAnswers(FLAKY_KEY, 500);
    flakyUrl = `${stack.receiver.url}/webhooks?key=${FLAKY_KEY}&retry_after=${RETRY_AFTER_S}`;
    expect((await stack.admin('POST', '/admin/subscriptions', { url: flakyUrl })).status).toBe(201);
    reference = `evpage-${Date.now()}-Order`;
    await stack.pay(reference, '25000.50');
    // The flaky subscriber's first attempt fails: the event is failing.
    await expect
      .poll(
        async () =>
          (await stack.admin('GET', `/admin/events?reference=${reference}`)).body.data[0]?.outcome,
        { timeout: WAIT_MS },
      )
      .toBe('failing');
    eventId = (await stack.admin('GET', `/admin/events?reference=${reference}`)).body.data[0]
      .event_id;

    await filterEvents({ delivery: 'failing', reference: reference.slice(0, -5) });
    const row = rowOf(reference);
    await row.getByText('25,000.50 NGN', { exact: true }).waitFor();
    await row.getByText('failing', { exact: true }).waitFor();
    await row.getByText('confirmed', { exact: true }).waitFor();
    await stack.screenshot('events-failing');

    // The prefix is case-sensitive, as the API's; the event id prefix finds it too.
    await filterEvents({ reference: reference.slice(0, -5).toUpperCase() });
    await page.getByText('No events match these filters.').waitFor();
    await filterEvents({ eventId: eventId.slice(0, -3) });
    await rowOf(reference).getByText('charge_success').waitFor();
    await filterEvents({ delivery: 'delivered', reference });
    await page.getByText('No events match these filters.').waitFor();
  });

  it('should copy an event id from the list', async () => {
    await filterEvents({ reference });
    const copy = rowOf(reference).getByRole('button', { name: 'Copy event id' });
    await copy.click();
    await rowOf(reference).getByRole('button', { name: 'Copied event id' }).waitFor();
    expect(
      await page.evaluate(() => (window as unknown as { copiedTexts: string[] }).copiedTexts),
    ).toEqual([eventId]);
  });

  it('should say "failed, next attempt in 4 min", then mark the manual retry that delivered it', async () => {
    await rowOf(reference).getByRole('link', { name: eventId }).click();
    await page.getByRole('heading', { name: 'Event charge_success', level: 1 }).waitFor();
    await page.locator('dl.facts').getByText('25,000.50 NGN', { exact: true }).waitFor();
    const flaky = page.getByRole('region', { name: `Delivery to ${flakyUrl}` });
    // 250 s after the attempt, less the seconds the page took to open: 4 minutes, rounded.
    await flaky.getByText(/^failed, next attempt in 4 min$/).waitFor();
    await stack.screenshot('event-failing');

    await stack.receiverAnswers(FLAKY_KEY, 200);
    await flaky.getByRole('button', { name: 'Retry now' }).click();
    await flaky.getByText('delivered after 2 attempts', { exact: true }).waitFor();
    const attempts = flaky.getByRole('listitem');
    expect(await attempts.count()).toBe(2);
    await attempts
      .nth(1)
      .getByText(/^manual retry/)
      .waitFor();
    expect(
      await attempts
        .nth(0)
        .getByText(/^manual /)
        .count(),
    ).toBe(0);
    await page.locator('dl.facts').first().getByText('delivered', { exact: true }).waitFor();
    await flaky.getByRole('button', { name: 'Copy delivery id' }).waitFor();
    await stack.screenshot('event-retried');
  });

  it('should show a held event with its confirmation reason and when the next check is due', async () => {
    const heldId = `evt_held_${Date.now()}`;
    await stack.ingest({
      event_type: 'charge_success',
      event_id: heldId,
      timestamp: new Date().toISOString(),
      data: { reference: `held-${Date.now()}`, amount: 5000, currency: 'NGN' },
    });
    await filterEvents({ delivery: 'held', eventId: heldId });
    await rowOf(heldId).getByText('held', { exact: true }).waitFor();
    await rowOf(heldId).getByRole('link', { name: heldId }).click();
    await page.getByText('record not found', { exact: true }).waitFor();
    const next = page.locator('dl.facts dt:text-is("Next check") + dd');
    await expect.poll(() => next.textContent()).toMatch(/\((in \d+ (s|min|h)|now)\)\s*$/);
    await page
      .getByText('Not sent to any subscriber while the payment service has not confirmed it.')
      .waitFor();
    await page
      .getByText('No delivery: the event is held until the payment service confirms it.')
      .waitFor();
    await stack.screenshot('event-held');
  });

  it('should fit the events and event pages in 375 px, every control labelled', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await filterEvents({ reference });
      await rowOf(reference).getByText('25,000.50 NGN').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      expect(await unlabelledControls(page)).toEqual([]);
      await stack.screenshot('narrow-events');
      await rowOf(reference).getByRole('link', { name: eventId }).click();
      await page.getByRole('region', { name: `Delivery to ${flakyUrl}` }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      expect(await unlabelledControls(page)).toEqual([]);
      await stack.screenshot('narrow-event');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('should take the received-at range as 24-hour text in the zone its labels name, and refuse text that is not a time', async () => {
    const from = '2026-11-24T21:30:00.000Z';
    const to = '2026-11-25T13:05:00.000Z';
    await page.goto(`${stack.gatewayUrl}/console/#/events?from=${from}&to=${to}`);
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    const fromField = page.getByLabel('Received from (UTC)', { exact: true });
    const toField = page.getByLabel('Received before (UTC)', { exact: true });
    expect(await fromField.inputValue()).toBe('2026-11-24 21:30');
    expect(await toField.inputValue()).toBe('2026-11-25 13:05');
    expect(await fromField.getAttribute('type')).toBe('text');
    expect(await fromField.getAttribute('placeholder')).toBe('YYYY-MM-DD HH:MM');
    // Applied again, the range goes back into the URL as the same UTC times.
    await toField.fill('2026-11-25 13:05:30');
    // The list read with the new range: the page has taken the new URL (a field filled
    // before that could be drawn again from the URL, losing the text typed into it).
    const applied = page.waitForResponse((response) => {
      const url = new URL(response.url());
      return (
        url.pathname === '/admin/events' &&
        url.searchParams.get('to') === '2026-11-25T13:05:30.000Z'
      );
    });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await applied;
    await expect
      .poll(() => page.evaluate(() => location.hash))
      .toBe(`#/events?${new URLSearchParams({ from, to: '2026-11-25T13:05:30.000Z' })}`);
    await page.getByText('No events match these filters.').waitFor();

    // The page reads its list again every 5 s with the range in force; any other range
    // would be the refused text applied.
    const hash = await page.evaluate(() => location.hash);
    await expectRefused(page, {
      field: fromField,
      text: '11/24/2026 09:30 PM',
      submit: 'Apply filters',
      message:
        'Received from: "11/24/2026 09:30 PM" is not a time. Write it as YYYY-MM-DD HH:MM (seconds optional), in UTC.',
      carries: (request) => {
        const url = new URL(request.url());
        return url.pathname === '/admin/events' && url.searchParams.get('from') !== from;
      },
    });
    expect(await page.evaluate(() => location.hash)).toBe(hash);
    await stack.screenshot('events-time-error');
    // Typing again clears the error.
    await fromField.fill('2026-11-24 21:30');
    expect(await page.locator('.field-error').count()).toBe(0);
  });

  it('should have logged no console error', () => {
    expect(stack.browser.problems).toEqual([]);
  });
});
