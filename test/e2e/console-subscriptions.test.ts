import type { Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlabelledControls } from '../support/browser.ts';
import { type ConsolePageStack, DESKTOP, startConsoleStack } from '../support/console-stack.ts';

// The console's Subscriptions page in a real Chromium (the machine's LANG, no locale forced)
// against `npm start`'s stack on ports of its own: a subscription made with the event-type
// picker (a misspelt other type refused with the closest known type shown), with limits and
// ordering; its health turning disabled when its receiver answers 410; a re-enable that
// re-queues what waited; a test event sent and seen delivered on its event page. The tests
// run in order and build on each other. Screenshots go to test-results/console-subscriptions/.
const PORTS = { gateway: 18907, sandbox: 18908, receiver: 18909 };
/** The longest any one wait in the page may take, in milliseconds. */
const WAIT_MS = 30_000;
const KEY = 'subscriptions-page';
const DESCRIPTION = 'payouts service';

let stack: ConsolePageStack;
let page: Page;
let item: Locator;
let subscriberUrl: string;
let secret: string;

beforeAll(async () => {
  stack = await startConsoleStack(PORTS, {
    waitMs: WAIT_MS,
    artifacts: 'console-subscriptions',
  });
  page = stack.page;
  item = page.getByRole('listitem', { name: `Subscription ${DESCRIPTION}` });
  subscriberUrl = `${stack.receiver.url}/webhooks?key=${KEY}`;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function openSubscriptions(): Promise<void> {
  await page.goto(`${stack.gatewayUrl}/console/#/subscriptions`);
  await page.getByRole('heading', { name: 'Subscriptions', level: 1 }).waitFor();
}

/** The subscription as the admin API has it. */
async function stored() {
  const listed = (await stack.admin('GET', '/admin/subscriptions')).body.data as Array<{
    id: string;
    description: string;
    event_types: string[] | null;
    max_per_second: number | null;
    max_in_flight: number | null;
    ordered: boolean;
    health: { state: string };
  }>;
  const found = listed.find((s) => s.description === DESCRIPTION);
  if (found === undefined) throw new Error('the subscription was not created');
  return found;
}

describe('console: subscriptions page', () => {
  it('should sign in', async () => {
    await stack.signIn(page);
  });

  it('should create a subscription with the picker, refusing a misspelt type with the closest one', async () => {
    await openSubscriptions();
    await page.getByRole('button', { name: 'New subscription' }).click();
    const form = page.locator('form.subscription-form');
    await form.getByLabel('URL', { exact: true }).fill(subscriberUrl);
    await form.getByLabel('Description', { exact: true }).fill(DESCRIPTION);
    await form.getByRole('checkbox', { name: /^Every event type/ }).uncheck();
    // The catalog's descriptions are searched too.
    await form.getByLabel('Find a type', { exact: true }).fill('beneficiary');
    await expect.poll(() => form.locator('ul.type-list li').count()).toBe(1);
    await form.getByRole('checkbox', { name: /^disbursement_success / }).check();
    await form.getByLabel('Find a type', { exact: true }).fill('');
    await form.getByLabel('Other type', { exact: true }).fill('disbursment_reversed');
    await form.getByRole('button', { name: 'Add type' }).click();
    await form
      .getByRole('checkbox', { name: /^disbursment_reversed not in the catalog/ })
      .waitFor();
    await form.getByLabel('Attempts a second at most', { exact: true }).fill('2');
    await form.getByLabel('Attempts at the same time at most', { exact: true }).fill('3');
    await form.getByRole('checkbox', { name: /^Ordered/ }).check();
    await form.getByRole('button', { name: 'Create subscription' }).click();
    await form
      .getByText(/Unknown event type "disbursment_reversed": did you mean disbursement_reversed\?/)
      .waitFor();
    await stack.screenshot('misspelt-type');

    // Corrected from the catalog, then created.
    // Unticked, a type the catalog does not list leaves the list (so a click, not uncheck).
    await form.getByRole('checkbox', { name: /^disbursment_reversed/ }).click();
    await form
      .getByRole('checkbox', { name: /^disbursment_reversed/ })
      .waitFor({ state: 'detached' });
    await form.getByRole('checkbox', { name: /^disbursement_reversed / }).check();
    await form.getByRole('button', { name: 'Create subscription' }).click();
    secret = await page.getByLabel('Secret', { exact: true }).inputValue();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await item.getByText('disbursement_success, disbursement_reversed', { exact: true }).waitFor();
    await item.getByText('2 attempts a second at most', { exact: true }).waitFor();
    await item.getByText('3 at the same time at most', { exact: true }).waitFor();
    await item.getByText('ordered per reference', { exact: true }).waitFor();
    await item.getByText('healthy', { exact: true }).waitFor();
    await item.getByText('no attempt in 24 h', { exact: true }).waitFor();
    expect(await stored()).toMatchObject({
      event_types: ['disbursement_success', 'disbursement_reversed'],
      max_per_second: 2,
      max_in_flight: 3,
      ordered: true,
      health: { state: 'healthy' },
    });
  });

  it('should accept a type the catalog does not list only with "custom type" ticked', async () => {
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel('Other type', { exact: true }).fill('payout_settled');
    await item.getByRole('button', { name: 'Add type' }).click();
    await item.getByRole('checkbox', { name: /^Custom type/ }).check();
    await item.getByRole('button', { name: 'Save' }).click();
    await item
      .getByText('disbursement_success, disbursement_reversed, payout_settled', { exact: true })
      .waitFor();
    expect((await stored()).event_types).toEqual([
      'disbursement_success',
      'disbursement_reversed',
      'payout_settled',
    ]);
  });

  it('should show the subscription disabled, with its reason, once its receiver answers 410', async () => {
    await stack.receiverAnswers(KEY, 410);
    await item.getByRole('button', { name: 'Send test event' }).click();
    await item.getByText(/^Test event sent:/).waitFor();
    // The page reads the list again every 10 s: the 410 shows without a reload.
    await item.getByText('disabled', { exact: true }).waitFor();
    // The reason's time in the console's one format, not the API's ISO 8601.
    await item
      .getByText(/^410 Gone from the subscriber at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
      .waitFor();
    await item.getByText(/^0\.0 % of 1 attempt in 24 h/).waitFor();
    expect(await item.getByRole('button', { name: 'Send test event' }).count()).toBe(0);
    await stack.screenshot('disabled');
  });

  it('should re-enable it, re-queueing what failed while it was down, and say how many', async () => {
    await stack.receiverAnswers(KEY, 200);
    const before = (await stack.received(KEY)).length;
    expect(
      await item.getByRole('checkbox', { name: 'Re-queue what is pending for it' }).isChecked(),
    ).toBe(true);
    await item.getByRole('button', { name: 'Re-enable' }).click();
    await item.getByText('Re-enabled; 1 delivery re-queued.', { exact: true }).waitFor();
    await item.getByText('healthy', { exact: true }).waitFor();
    await item.getByText('re-enabled by an operator', { exact: false }).waitFor();
    // The re-queued test event reaches the receiver, now answering 200.
    await expect
      .poll(async () => (await stack.received(KEY)).length, { timeout: WAIT_MS })
      .toBe(before + 1);
  });

  it('should send a test event and show it delivered on its event page', async () => {
    await openSubscriptions();
    const before = (await stack.received(KEY)).length;
    await item.getByRole('button', { name: 'Send test event' }).click();
    const link = item.locator('.test-sent a');
    await link.waitFor();
    const eventId = (await link.textContent()) ?? '';
    expect(eventId).toMatch(/^subscription\.test:sub_/);
    await expect
      .poll(async () => (await stack.received(KEY)).length, { timeout: WAIT_MS })
      .toBe(before + 1);
    const last = (await stack.received(KEY)).at(-1);
    if (last === undefined) throw new Error('nothing received');
    expect(last.headers['webhook-id']).toBe(eventId);
    const subscription = await stored();
    expect(subscription.health.state).toBe('healthy');
    await link.click();
    await page
      .getByRole('heading', { level: 1 })
      .filter({ hasText: 'subscription.test' })
      .waitFor();
    await page.getByText('delivered after 1 attempt', { exact: true }).waitFor();
    await stack.screenshot('test-event');
    // Signed with the secret the console showed at creation, verified as a subscriber would.
    expect(new Webhook(secret).verify(last.body, last.headers)).toMatchObject({
      event_type: 'subscription.test',
      event_id: eventId,
      data: { subscription_id: subscription.id },
    });
  });

  it('should fit 375 px with every control labelled and log no console error', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await openSubscriptions();
      await item.getByRole('button', { name: 'Edit' }).click();
      expect(await unlabelledControls(page)).toEqual([]);
      // What sticks out past the right edge (none: no sideways scrolling).
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll('body *'))
          .filter(
            (el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5,
          )
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
      );
      expect(wide).toEqual([]);
      await stack.screenshot('narrow');
    } finally {
      await page.setViewportSize(DESKTOP);
    }
    expect(stack.browser.problems).toEqual([
      // The misspelt type's 400, as Chromium logs a failed fetch.
      expect.stringContaining('400'),
    ]);
  });
});
