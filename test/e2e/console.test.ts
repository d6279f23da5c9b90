import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlabelledControls } from '../support/browser.ts';
import {
  ADMIN_TOKEN,
  type ConsolePageStack,
  DESKTOP,
  startConsoleStack,
} from '../support/console-stack.ts';

// The operator console in a real Chromium, against `npm start`'s stack on ports of its own
// (readme-session.test.ts uses 18787-18789 and may run at the same time). The tests run in
// order and build on each other: the subscription created in one receives the payment of
// the next. Screenshots of each page go to test-results/console/ (the README's pictures are
// console-display.test.ts's).
const PORTS = { gateway: 18797, sandbox: 18798, receiver: 18799 };
/** The longest any one wait in the page may take, in milliseconds. */
const WAIT_MS = 20_000;

let stack: ConsolePageStack;
let page: Page;
/** Resource loads the tests make fail on purpose, as Chromium reports them on the console. */
const expectedProblems: string[] = [];

beforeAll(async () => {
  stack = await startConsoleStack(PORTS, { waitMs: WAIT_MS, artifacts: 'console' });
  page = stack.page;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** How many requests the test subscriber got for `key`. */
async function receivedCount(key: string): Promise<number> {
  return (await stack.received(key)).length;
}

/** The console's address for a page of it. */
function consoleUrl(fragment = ''): string {
  return `${stack.gatewayUrl}/console/${fragment}`;
}

/** A failed admin API load as Chromium reports it on the console. */
function failedLoad(status: string, path: string): string {
  return `Failed to load resource: the server responded with a status of ${status} at ${stack.gatewayUrl}${path}`;
}

/** Follows a link of the console's navigation. */
async function goTo(pageName: 'Events' | 'Subscriptions' | 'Deliveries'): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Pages' })
    .getByRole('link', { name: pageName, exact: true })
    .click();
  await page.getByRole('heading', { name: pageName, level: 1, exact: true }).waitFor();
}

function deliveryTo(url: string): Locator {
  return page.getByRole('region', { name: `Delivery to ${url}` });
}

// The subscriber the console creates: answers 500 with `Retry-After: 3600`, so the relay's
// own retry is an hour away and only the console's retry can deliver it during the test.
const FLAKY_KEY = 'orders';
let flakyUrl: string;
let paymentReference: string;

describe('operator console', () => {
  it('should serve /console/ with a strict CSP, no framing and no caching of the page', async () => {
    expect(stack.output()).toContain(`console   ${stack.gatewayUrl}/console/`);
    const redirect = await fetch(`${stack.gatewayUrl}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(307);
    expect(redirect.headers.get('location')).toBe('/console/');
    const response = await fetch(consoleUrl());
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toContain('<style');
    const script = /src="(assets\/app-[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(consoleUrl(script));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-security-policy')).toBe(csp);
  });

  it('should refuse a wrong token with the API message, then sign in with the keyboard', async () => {
    const refused = await fetch(`${stack.gatewayUrl}/admin/deliveries/counts`, {
      headers: { Authorization: 'Bearer not-the-token' },
    });
    expect(refused.status).toBe(401);
    const { message } = (await refused.json()) as { message: string };
    await page.goto(consoleUrl());
    const token = page.getByLabel('Admin token', { exact: true });
    await expect.poll(() => token.evaluate((field) => field === document.activeElement)).toBe(true);
    await page.keyboard.type('not-the-token');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText(message, { exact: true }).waitFor();
    expectedProblems.push(failedLoad('401 (Unauthorized)', '/admin/deliveries/counts'));
    await stack.screenshot('sign-in-refused');

    await token.fill('');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    const stored = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: Object.values(localStorage),
      cookies: document.cookie,
    }));
    expect(stored).toEqual({ session: [ADMIN_TOKEN], local: [], cookies: '' });
  });

  it('should create a subscription and show its whsec_ secret exactly once', async () => {
    await stack.receiverAnswers(FLAKY_KEY, 500);
    flakyUrl = `${stack.receiver.url}/webhooks?key=${FLAKY_KEY}&retry_after=3600`;
    await goTo('Subscriptions');
    await page.getByRole('button', { name: 'New subscription' }).click();
    await page.getByLabel('URL', { exact: true }).fill(flakyUrl);
    await page.getByLabel('Description', { exact: true }).fill('orders service');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    const notice = page.getByRole('region', { name: `Signing secret for ${flakyUrl}` });
    await notice.getByText('it is shown only this once').waitFor();
    const secret = await notice.getByLabel('Secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => notice.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);

    const listed = await stack.admin('GET', '/admin/subscriptions');
    const created = listed.body.data.find((s: { url: string }) => s.url === flakyUrl);
    expect(created).toMatchObject({ description: 'orders service', enabled: true });
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    await notice.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: flakyUrl }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByRole('heading', { name: flakyUrl }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await stack.screenshot('subscriptions');
  });

  it("should show the API's message beside the URL when the URL breaks a rule", async () => {
    const badUrl = 'http://10.0.0.1/hook';
    const direct = await stack.admin('POST', '/admin/subscriptions', { url: badUrl });
    expect(direct.status).toBe(400);
    const message = direct.body.issues.find((i: { path: string }) => i.path === 'url').message;
    await page.getByRole('button', { name: 'New subscription' }).click();
    const url = page.getByLabel('URL', { exact: true });
    await url.fill(badUrl);
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.locator('.field-error').getByText(message, { exact: true }).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').getByText(direct.body.message, { exact: true }).waitFor();
    expectedProblems.push(failedLoad('400 (Bad Request)', '/admin/subscriptions'));
    await stack.screenshot('subscription-bad-url');
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  it('should list a completed sandbox payment as charge_success and show its deliveries', async () => {
    paymentReference = `console-${Date.now()}`;
    await stack.pay(paymentReference, '25000.00');

    await goTo('Events');
    await page.getByLabel('Reference', { exact: true }).fill(paymentReference);
    await page.getByLabel('Reference', { exact: true }).press('Enter');
    // Live refresh picks the event up if the webhook has not arrived yet.
    const row = page.getByRole('row').filter({ hasText: paymentReference });
    await row.getByText('charge_success').waitFor();
    await row.getByText('confirmed').waitFor();
    await stack.screenshot('events');
    await row.getByRole('link').click();

    await page.getByRole('heading', { name: 'Event charge_success', level: 1 }).waitFor();
    await page.getByText('The payment service confirmed the record this event names.').waitFor();
    const flaky = deliveryTo(flakyUrl);
    await flaky.getByRole('listitem').getByText('HTTP 500').waitFor();
    await flaky.getByText('answered 500').waitFor();
    await flaky.getByText('pending', { exact: true }).waitFor();
    const receiver = deliveryTo(`http://127.0.0.1:${PORTS.receiver}/`);
    await receiver.getByText('delivered', { exact: true }).waitFor();
    await receiver
      .getByRole('listitem')
      .getByText(/^HTTP 2\d\d$/)
      .waitFor();
    await page.getByText(`"reference": "${paymentReference}"`).waitFor();
    await stack.screenshot('event');
  });

  it('should deliver the failed delivery once the subscriber recovers and it is retried', async () => {
    await stack.receiverAnswers(FLAKY_KEY, 200);
    const flaky = deliveryTo(flakyUrl);
    await flaky.getByRole('button', { name: 'Retry now' }).click();
    // The page reloads itself every 2 s while a delivery is pending.
    await flaky.getByText('delivered', { exact: true }).waitFor();
    const attempts = flaky.getByRole('listitem');
    expect(await attempts.count()).toBe(2);
    await attempts.nth(1).getByText('HTTP 200').waitFor();
    expect(await receivedCount(FLAKY_KEY)).toBe(2);
    await stack.screenshot('event-retried');
  });

  it('should show an event awaiting confirmation with its reason and next check, and replay it only once forced', async () => {
    // A charge_success for a payment the sandbox never saw: the gateway's confirmation
    // finds no record yet, so the event is held awaiting confirmation and not delivered.
    const eventId = `evt_console_${Date.now()}`;
    await stack.ingest({
      event_type: 'charge_success',
      event_id: eventId,
      timestamp: new Date().toISOString(),
      data: { reference: `no-such-payment-${Date.now()}`, amount: 5000, currency: 'NGN' },
    });

    await goTo('Events');
    await page.getByLabel('Confirmation', { exact: true }).selectOption('awaiting_confirmation');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('link', { name: eventId }).click();
    await page.getByText('The payment service cannot confirm this event yet').waitFor();
    await page.getByText('record not found', { exact: true }).waitFor();
    const facts = page.locator('dl.facts');
    await facts.getByText('Next check', { exact: true }).waitFor();
    expect(await facts.locator('dt:text-is("Next check") + dd time').count()).toBe(1);
    await page.getByText('No delivery: the event is held').waitFor();
    const replay = page.getByRole('button', { name: 'Replay', exact: true });
    expect(await replay.isDisabled()).toBe(true);
    await page.getByLabel('Replay anyway (force)').check();
    await page
      .getByLabel('Your name (recorded with the forced replay)', { exact: true })
      .fill('console test');
    await replay.click();
    await page.getByText(/^Replay queued: 2 deliveries\.$/).waitFor();
    await page.getByText(/^by console test from /).waitFor();
    await deliveryTo(flakyUrl).getByText('delivered', { exact: true }).waitFor();
    await stack.screenshot('event-awaiting-confirmation');
  });

  it('should list a failed delivery and deliver it with Retry once its subscription is fixed', async () => {
    // A subscriber that answers 410 Gone: the delivery fails at once and the gateway
    // disables the subscription.
    const goneUrl = `${stack.receiver.url}/hook?key=gone&status=410`;
    const created = await stack.admin('POST', '/admin/subscriptions', {
      url: goneUrl,
      description: 'gone subscriber',
    });
    expect(created.status).toBe(201);
    await goTo('Events');
    await page.getByLabel('Reference', { exact: true }).fill(paymentReference);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('row').filter({ hasText: paymentReference }).getByRole('link').click();
    await page
      .getByLabel('Deliver to', { exact: true })
      .selectOption({ label: `${goneUrl} (gone subscriber)` });
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.getByText(/^Replay queued: 1 delivery\.$/).waitFor();
    await deliveryTo(goneUrl).getByRole('listitem').getByText('HTTP 410').waitFor();
    await deliveryTo(goneUrl).getByText('failed', { exact: true }).waitFor();

    // Enabled again from the subscriptions page, and the subscriber is back.
    await stack.receiverAnswers('gone', 200);
    await goTo('Subscriptions');
    const item = page.getByRole('listitem', { name: 'Subscription gone subscriber' });
    await item.getByText('disabled', { exact: true }).waitFor();
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel('Enabled', { exact: true }).check();
    await item.getByRole('checkbox', { name: /^Every event type/ }).uncheck();
    await item.getByRole('checkbox', { name: /^charge_success / }).check();
    await item.getByRole('button', { name: 'Save' }).click();
    await item.getByText('charge_success', { exact: true }).waitFor();
    await item.getByText('healthy', { exact: true }).waitFor();

    await goTo('Deliveries');
    const failedRow = page.getByRole('row').filter({ hasText: goneUrl });
    await failedRow.getByText('HTTP 410').waitFor();
    await stack.screenshot('deliveries-failed');
    await failedRow.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => failedRow.count(), { timeout: WAIT_MS }).toBe(0);
    await expect.poll(() => receivedCount('gone'), { timeout: WAIT_MS }).toBe(2);
  });

  it('should show the counts by status and the last 24 hours as a chart', async () => {
    const counts = (await stack.admin('GET', '/admin/deliveries/counts')).body.data;
    const hourly = (await stack.admin('GET', '/admin/deliveries/hourly?hours=24')).body.data.hours;
    await page.getByRole('button', { name: 'Refresh now' }).click();
    const shown = page.getByRole('definition');
    await expect
      .poll(() => shown.allTextContents())
      .toEqual([counts.delivered, counts.pending, counts.failed, counts.total].map(String));
    expect(counts.delivered).toBeGreaterThanOrEqual(5);
    await page.locator('.chart canvas').first().waitFor();
    await page.getByText('Numbers by hour').click();
    const hours = page.locator('table.hours tbody tr');
    expect(await hours.count()).toBe(hourly.length);
    await page.getByLabel('Show', { exact: true }).selectOption('delivered');
    await page.getByRole('row').filter({ hasText: flakyUrl }).first().waitFor();
    await stack.screenshot('deliveries');
  });

  it('should rotate a secret (shown once) and delete a subscription after confirming', async () => {
    await goTo('Subscriptions');
    const item = page.getByRole('listitem', { name: 'Subscription gone subscriber' });
    await item.getByRole('button', { name: 'Rotate secret' }).click();
    await item.getByRole('button', { name: 'Yes, rotate' }).click();
    const secret = await page.getByLabel('Secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await item.getByText(/^still signs until /).waitFor();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(secret);

    await item.getByRole('button', { name: 'Delete' }).click();
    await item.getByText('Delete this subscription?').waitFor();
    await item.getByRole('button', { name: 'Cancel' }).click();
    await item.getByRole('button', { name: 'Delete' }).click();
    await item.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => item.count(), { timeout: WAIT_MS }).toBe(0);
    const listed = (await stack.admin('GET', '/admin/subscriptions')).body.data;
    expect(listed.map((s: { description: string }) => s.description)).not.toContain(
      'gone subscriber',
    );
  });

  it('should fit every page in 375 px without sideways scrolling, every control labelled', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      for (const [name, fragment] of [
        ['events', '#/events'],
        ['subscriptions', '#/subscriptions'],
        ['deliveries', '#/deliveries'],
      ] as const) {
        await page.goto(consoleUrl(fragment));
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          375,
        );
        expect(await unlabelledControls(page), name).toEqual([]);
        await stack.screenshot(`narrow-${name}`);
      }
      await goTo('Events');
      await page.getByRole('row').filter({ hasText: paymentReference }).getByRole('link').click();
      await deliveryTo(flakyUrl).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      expect(await unlabelledControls(page), 'event').toEqual([]);
      await stack.screenshot('narrow-event');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('should show an error page, not a blank one, for a crafted event link', async () => {
    await page.goto(consoleUrl('#/events/%'));
    await page.getByRole('heading', { name: 'No such page', level: 1 }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'not valid percent-encoding' }).waitFor();
    await page.getByRole('link', { name: 'Back to the events' }).click();
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
  });

  it('should sign out and remove the token from sessionStorage', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token', { exact: true }).waitFor();
    await page.getByText('Signed out.').waitFor();
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([]);
    await page.reload();
    await page.getByLabel('Admin token', { exact: true }).waitFor();
  });

  it('should have logged no console error but the refusals the tests asked for', () => {
    expect(stack.browser.problems).toEqual(expectedProblems);
  });
});
