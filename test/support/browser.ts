/**
 * A real headless Chromium for the browser tests: playwright-core drives the browser
 * that the `@sparticuz/chromium` package ships (unpacked to the temporary folder on first
 * use; nothing is downloaded), and every console error and uncaught exception of the page
 * is collected so a test can assert there were none.
 */
import sparticuz from '@sparticuz/chromium';
import { type Browser, chromium, type Page } from 'playwright-core';

/** A browser with one page, and what went wrong in it. */
export interface BrowserPage {
  readonly browser: Browser;
  readonly page: Page;
  /**
   * Every `console.error` and uncaught exception of the page, and every failed resource
   * load Chromium reports on the console (`Failed to load resource: ... at <url>`).
   */
  readonly problems: string[];
}

/**
 * Launches Chromium headless and opens a page.
 *
 * @param viewport - the page's size in CSS pixels.
 * @returns the browser, its page and the live list of the page's problems.
 */
export async function openBrowserPage(viewport: {
  width: number;
  height: number;
}): Promise<BrowserPage> {
  const browser = await chromium.launch({
    executablePath: await sparticuz.executablePath(),
    args: sparticuz.args,
    headless: true,
  });
  // A locale of its own: under LANG=C Chromium reports `en-US@posix`, a tag that Intl (and
  // so uPlot's number format) refuses.
  const context = await browser.newContext({ viewport, locale: 'en-US' });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`${message.text()} at ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return { browser, page, problems };
}

/**
 * The form controls and buttons of the page that have no accessible name: no `<label>`,
 * no `aria-label` or `aria-labelledby`, and (for buttons) no text. Screen readers announce
 * such a control as just "edit text" or "button".
 *
 * @param page - the page, as it is now.
 * @returns a short description (`input[type=text]#id`) of each control without a name.
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const controls = Array.from(
      document.querySelectorAll<HTMLElement>('input, select, textarea, button'),
    );
    const nameless: string[] = [];
    for (const control of controls) {
      if (control instanceof HTMLInputElement && control.type === 'hidden') continue;
      const labelled =
        ((control as HTMLInputElement).labels?.length ?? 0) > 0 ||
        (control.getAttribute('aria-label') ?? '').trim() !== '' ||
        (control.getAttribute('aria-labelledby') ?? '').trim() !== '' ||
        (control instanceof HTMLButtonElement && (control.textContent ?? '').trim() !== '');
      if (!labelled) {
        const type = control.getAttribute('type');
        nameless.push(
          `${control.tagName.toLowerCase()}${type === null ? '' : `[type=${type}]`}${control.id === '' ? '' : `#${control.id}`}`,
        );
      }
    }
    return nameless;
  });
}
