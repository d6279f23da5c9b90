import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserOptions,
  openBrowserPage,
  wordsBrokenAcrossLines,
} from '../support/browser.ts';
import { type ConsoleStack, DESKTOP, startConsoleStack } from '../support/console-stack.ts';

// How the console writes what it shows, in a real Chromium against `npm start`'s stack on
// ports of its own: under the locales a machine may give the browser (the chart included),
// times in one 24-hour format in UTC or local time, words kept whole at 375 px, destructive
// buttons apart from the others, and the README's screenshots.
const root = join(import.meta.dirname, '..', '..');
const PORTS = { gateway: 18897, sandbox: 18898, receiver: 18899 };
const WAIT_MS = 20_000;
/** A time zone away from UTC by a half hour, so local times cannot pass for UTC ones. */
const LOCAL_ZONE = 'Asia/Kolkata';
/** The README's pictures, written when missing or with UPDATE_SCREENSHOTS=1. */
const IMAGES = join(root, 'docs', 'images');
/** Screenshots for a person to look at, not committed. */
const ARTIFACTS = join(root, 'test-results', 'console-display');
/** A time as the console writes it: 24-hour, year first, its zone named. */
const UTC_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC$/;
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC\+05:30$/;

let stack: ConsoleStack;
let goneUrl: string;
let eventId: string;
/** A charge_success for a payment the sandbox never saw: held, awaiting confirmation. */
const heldEventId = `evt_display_${Date.now()}`;

beforeAll(async () => {
  stack = await startConsoleStack(PORTS);
  // A subscriber that is gone (410): its delivery fails, so every status has a row.
  goneUrl = `${stack.receiver.url}/hooks/orders-service-with-a-rather-long-path?key=gone&status=410`;
  const created = await stack.admin('POST', '/admin/subscriptions', {
    url: goneUrl,
    description: 'orders service, answering 410 Gone since it moved to another address',
    event_types: ['charge_success'],
  });
  expect(created.status).toBe(201);
  const reference = `display-${Date.now()}`;
  await stack.pay(reference, '25000.00');
  await stack.ingest({
    event_type: 'charge_success',
    event_id: heldEventId,
    timestamp: new Date().toISOString(),
    data: { reference: `no-such-payment-${Date.now()}`, amount: 5000, currency: 'NGN' },
  });
  // Bounded wait for the event and both deliveries to settle (delivered and failed).
  const deadline = Date.now() + 60_000;
  let statuses: string[] = [];
  while (statuses.join() !== 'delivered,failed') {
    if (Date.now() > deadline) throw new Error(`deliveries not settled: ${statuses.join()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const listed = await stack.admin('GET', `/admin/events?reference=${reference}`);
    expect(listed.status).toBe(200);
    const first: { event_id: string } | undefined = listed.body.data[0];
    if (first === undefined) continue;
    eventId = first.event_id;
    const event = await stack.admin('GET', `/admin/events/${encodeURIComponent(first.event_id)}`);
    expect(event.status).toBe(200);
    const deliveries: { status: string }[] = event.body.data.deliveries;
    statuses = deliveries.map((d) => d.status).sort();
  }
}, 150_000);

afterAll(async () => {
  await stack?.stop();
});

/** Opens a browser as `options` says, signed in to the console on `fragment`. */
async function signedIn(fragment: string, options: BrowserOptions = {}, viewport = DESKTOP) {
  const opened = await openBrowserPage(viewport, options);
  const { page } = opened;
  page.setDefaultTimeout(WAIT_MS);
  // Every string uPlot draws on its canvas (tick labels, axis names), to read them back.
  await page.addInitScript(() => {
    const drawn: string[] = [];
    Object.assign(window, { drawnText: drawn });
    const fillText = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
      drawn.push(String(text));
      fillText.call(this, text, ...rest);
    };
  });
  await stack.signIn(page);
  await page.goto(`${stack.gatewayUrl}/console/${fragment}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  return opened;
}

/** The WCAG contrast ratio of two sRGB colours given as [r, g, b] in 0-255. */
function contrast(one: number[], other: number[]): number {
  const luminance = (rgb: number[]) => {
    const [r = 0, g = 0, b = 0] = rgb.map((channel) => {
      const c = channel / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(one), luminance(other)].sort((a, b) => b - a);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
}

function drawnText(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { drawnText: string[] }).drawnText);
}

/** Waits for the Deliveries chart and returns the hour the legend names under the pointer. */
async function chartLegendHour(page: Page): Promise<string> {
  await page.locator('.chart canvas').first().waitFor();
  const over = page.locator('.chart .u-over');
  const box = await over.boundingBox();
  if (box === null) throw new Error('the chart has no drawing area');
  await page.mouse.move(box.x + box.width - 4, box.y + box.height / 2);
  return (
    (await page.locator('.chart .u-legend .u-series').first().locator('.u-value').textContent()) ??
    ''
  );
}

describe('console display', () => {
  describe('under any browser locale', () => {
    const setups: [string, BrowserOptions, RegExp][] = [
      // Chromium under LANG=C.UTF-8 reports en-US@posix, which Intl refuses.
      ['LANG=C.UTF-8', { lang: 'C.UTF-8' }, /^en-US@posix$/],
      ['LANG=C', { lang: 'C' }, /./],
      [`the machine's LANG (${process.env.LANG ?? 'unset'})`, {}, /./],
      ['en-US', { locale: 'en-US' }, /^en-US$/],
    ];
    for (const [name, options, language] of setups) {
      it(`should draw the deliveries chart under ${name}`, async () => {
        const { browser, page, problems } = await signedIn('#/deliveries', options);
        try {
          expect(await page.evaluate(() => navigator.language)).toMatch(language);
          expect(await chartLegendHour(page)).toMatch(UTC_TIME);
          await page.getByText('Numbers by hour').click();
          const hours = await page.locator('table.hours tbody td time').allTextContents();
          expect(hours.length).toBeGreaterThan(0);
          for (const hour of hours) expect(hour).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:00 UTC$/);
          expect(await page.locator('.notice.error').count()).toBe(0);
          expect(problems).toEqual([]);
        } finally {
          await browser.close();
        }
      });
    }
  });

  describe('times', () => {
    it('should write times in UTC by default, naming it, then in local time once chosen, kept after a reload', async () => {
      const { browser, page, problems } = await signedIn(`#/events/${eventId}`, {
        timezoneId: LOCAL_ZONE,
      });
      try {
        const received = page.locator('dl.facts dt:text-is("Received") + dd time');
        const utc = (await received.textContent()) ?? '';
        expect(utc).toMatch(UTC_TIME);
        const iso = (await received.getAttribute('datetime')) ?? '';
        expect(utc.slice(0, 19)).toBe(iso.slice(0, 19).replace('T', ' '));
        expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);

        await page.getByLabel('Times in', { exact: true }).selectOption('local');
        await expect.poll(() => received.textContent()).toMatch(LOCAL_TIME);
        const shifted = new Date(Date.parse(iso) + 330 * 60_000).toISOString();
        expect((await received.textContent())?.slice(0, 19)).toBe(
          shifted.slice(0, 19).replace('T', ' '),
        );
        for (const time of await page.locator('main time').allTextContents()) {
          expect(time).toMatch(LOCAL_TIME);
        }

        await page.reload();
        await received.waitFor();
        expect(await received.textContent()).toMatch(LOCAL_TIME);
        expect(await page.getByLabel('Times in', { exact: true }).inputValue()).toBe('local');
        await page.getByLabel('Times in', { exact: true }).selectOption('utc');
        await expect.poll(() => received.textContent()).toBe(utc);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    });

    it('should use one 24-hour clock in the tables and on the chart, in the chosen zone', async () => {
      const { browser, page, problems } = await signedIn('#/deliveries', { locale: 'en-US' });
      try {
        expect(await chartLegendHour(page)).toMatch(UTC_TIME);
        const drawn = await drawnText(page);
        const ticks = drawn.filter((text) => /^\d{2}:\d{2}$/.test(text));
        expect(ticks.length).toBeGreaterThan(2);
        expect(drawn).toContain('Hour (UTC)');
        expect(drawn.filter((text) => /\b(am|pm)\b|\d(am|pm)/i.test(text))).toEqual([]);
        await page.getByLabel('Show', { exact: true }).selectOption('failed');
        const updated = page.locator('td[data-label="Updated"]');
        await updated.first().waitFor();
        for (const time of await updated.allTextContents()) expect(time).toMatch(UTC_TIME);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    });
  });

  describe('visual pass', () => {
    it('should break no word of prose across lines at 375 px', async () => {
      const { browser, page } = await signedIn(
        '#/events',
        { timezoneId: LOCAL_ZONE },
        { width: 375, height: 800 },
      );
      try {
        // Local times are the longest the console writes (`UTC+05:30`).
        await page.getByLabel('Times in', { exact: true }).selectOption('local');
        // The measure itself: a word squeezed into 4 characters is reported.
        await page.evaluate(() => {
          const squeezed = document.createElement('p');
          squeezed.id = 'squeezed';
          squeezed.textContent = 'subscription disabled';
          squeezed.style.width = '4ch';
          squeezed.style.overflowWrap = 'anywhere';
          document.body.append(squeezed);
        });
        expect(await wordsBrokenAcrossLines(page)).toEqual([
          'subscription in <p>',
          'disabled in <p>',
        ]);
        await page.evaluate(() => document.getElementById('squeezed')?.remove());
        mkdirSync(ARTIFACTS, { recursive: true });
        for (const [name, fragment] of [
          ['events', '#/events'],
          ['event', `#/events/${eventId}`],
          ['subscriptions', '#/subscriptions'],
          ['deliveries', '#/deliveries'],
        ] as const) {
          await page.goto(`${stack.gatewayUrl}/console/${fragment}`);
          await page.getByRole('heading', { level: 1 }).waitFor();
          await page.waitForLoadState('networkidle');
          if (name === 'deliveries') {
            await page.locator('.chart canvas').first().waitFor();
            await page.getByText('Numbers by hour').click();
          }
          await page.screenshot({ path: join(ARTIFACTS, `narrow-${name}.png`), fullPage: true });
          expect(await wordsBrokenAcrossLines(page), fragment).toEqual([]);
          expect(await page.evaluate(() => document.documentElement.scrollWidth), fragment).toBe(
            375,
          );
        }
      } finally {
        await browser.close();
      }
    });

    it('should make destructive buttons (rotate, delete, a forced replay) look unlike primary and plain ones', async () => {
      const { browser, page } = await signedIn('#/subscriptions');
      try {
        const item = page.getByRole('listitem', { name: /^Subscription orders service/ });
        const look = (name: string) =>
          item.getByRole('button', { name, exact: true }).evaluate((button) => {
            const style = getComputedStyle(button);
            return `${style.color} on ${style.backgroundColor}, border ${style.borderColor}`;
          });
        const primary = await page
          .getByRole('button', { name: 'New subscription' })
          .evaluate((button) => getComputedStyle(button).backgroundColor);
        const [plain, rotate, remove] = await Promise.all([
          look('Edit'),
          look('Rotate secret'),
          look('Delete'),
        ]);
        expect(rotate).toBe(remove);
        expect(remove).not.toBe(plain);
        expect(remove).not.toContain(primary);
        // Red text or fill: the red channel well above the others.
        const red = /rgb\((\d+), (\d+), (\d+)\)/.exec(remove);
        expect(Number(red?.[1])).toBeGreaterThan(Number(red?.[2]) + 80);
        await item.getByRole('button', { name: 'Delete', exact: true }).click();
        const confirming = await look('Yes, delete');
        expect(confirming).not.toBe(plain);
        expect(confirming).not.toContain(primary);

        // Replay is the event page's main action, unless it must be forced.
        const replayLook = async (id: string) => {
          await page.goto(`${stack.gatewayUrl}/console/#/events/${encodeURIComponent(id)}`);
          return page
            .getByRole('button', { name: 'Replay', exact: true })
            .evaluate((button) => getComputedStyle(button).backgroundColor);
        };
        expect(await replayLook(eventId)).toBe(primary);
        const forced = await replayLook(heldEventId);
        expect(forced).not.toBe(primary);
        const fill = /rgb\((\d+), (\d+), (\d+)\)/.exec(forced);
        expect(Number(fill?.[1])).toBeGreaterThan(Number(fill?.[2]) + 80);
      } finally {
        await browser.close();
      }
    });

    it('should fill status badges with their tone, text above 4.5:1: delivered green, pending amber, failed red', async () => {
      const { browser, page } = await signedIn(`#/events/${eventId}`);
      try {
        const tone = (status: string) =>
          page
            .locator('.badge', { hasText: new RegExp(`^${status}$`) })
            .first()
            .evaluate((badge) => {
              const style = getComputedStyle(badge);
              const channels = (value: string) => (value.match(/\d+/g) ?? []).map(Number);
              return { color: channels(style.color), fill: channels(style.backgroundColor) };
            });
        const delivered = await tone('delivered');
        const failed = await tone('failed');
        await page.goto(`${stack.gatewayUrl}/console/#/events/${heldEventId}`);
        const pending = await tone('awaiting_confirmation');
        for (const badge of [delivered, failed, pending]) {
          // A fill of its own (an opaque rgb, not a transparent rgba).
          expect(badge.fill).toHaveLength(3);
          expect(contrast(badge.color, badge.fill)).toBeGreaterThanOrEqual(4.5);
        }
        const [dr = 0, dg = 0, db = 0] = delivered.color;
        expect(dg).toBeGreaterThan(Math.max(dr, db) + 40);
        const [fr = 0, fg = 0, fb = 0] = failed.color;
        expect(fr).toBeGreaterThan(Math.max(fg, fb) + 80);
        const [pr = 0, pg = 0, pb = 0] = pending.color;
        expect(Math.min(pr, pg)).toBeGreaterThan(pb + 40);
        expect(pr).toBeGreaterThan(pg);
      } finally {
        await browser.close();
      }
    });
  });

  describe('README screenshots', () => {
    it('should picture the event page and the subscriptions page for the README', async () => {
      const write = process.env.UPDATE_SCREENSHOTS === '1';
      // Each page with what it shows loaded: the deliveries of the event, the subscriptions.
      const shots = [
        [`#/events/${eventId}`, 'console-event.png', /^Delivery to /],
        ['#/subscriptions', 'console-subscriptions.png', /^Subscription /],
      ] as const;
      const { browser, page } = await signedIn('#/events', {}, { width: 1100, height: 800 });
      try {
        mkdirSync(IMAGES, { recursive: true });
        for (const [fragment, file, shown] of shots) {
          await page.goto(`${stack.gatewayUrl}/console/${fragment}`);
          const parts = page.getByRole(fragment === '#/subscriptions' ? 'listitem' : 'region', {
            name: shown,
          });
          await expect.poll(() => parts.count()).toBe(2);
          await page.waitForLoadState('networkidle');
          const path = write || !existsSync(join(IMAGES, file)) ? join(IMAGES, file) : undefined;
          const image = await page.screenshot({ fullPage: true, ...(path ? { path } : {}) });
          expect(image.byteLength).toBeGreaterThan(10_000);
        }
      } finally {
        await browser.close();
      }
    });
  });
});
