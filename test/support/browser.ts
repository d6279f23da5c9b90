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

/** How the browser is started: its environment's locale, and the page's own settings. */
export interface BrowserOptions {
  /**
   * `LANG` for the Chromium process, from which it takes the language it reports
   * (`C.UTF-8` gives `en-US@posix`, `C` gives `und`). @default the machine's own
   */
  readonly lang?: string;
  /** A locale the page is given over the browser's, e.g. `en-US`. @default none */
  readonly locale?: string;
  /** A time zone the page is given over the machine's, e.g. `Asia/Kolkata`. @default none */
  readonly timezoneId?: string;
}

/**
 * Launches Chromium headless and opens a page. The console must work under whatever
 * locale the machine gives, so none is forced unless `options` asks for one.
 *
 * @param viewport - the page's size in CSS pixels.
 * @param options - the process's `LANG`, the page's locale and time zone.
 * @returns the browser, its page and the live list of the page's problems.
 */
export async function openBrowserPage(
  viewport: { width: number; height: number },
  options: BrowserOptions = {},
): Promise<BrowserPage> {
  const browser = await chromium.launch({
    executablePath: await sparticuz.executablePath(),
    args: sparticuz.args,
    headless: true,
    ...(options.lang === undefined
      ? {}
      : { env: { ...process.env, LANG: options.lang, LC_ALL: options.lang } }),
  });
  const context = await browser.newContext({
    viewport,
    ...(options.locale === undefined ? {} : { locale: options.locale }),
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId }),
  });
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

/**
 * The words of the page's prose that a line break cuts in two: each run of letters and
 * digits, each date (`2026-11-24`) and clock time (`14:30:05`) of a visible text node,
 * measured with a Range, that spans more than one line. Ids, URLs and code (`code`, `pre`, `.id`, `.url`, form fields) may break anywhere,
 * so they are left out, and so is text in a box of 1 px or less (visually hidden labels).
 *
 * @param page - the page, as it is now.
 * @returns each cut word with the element holding it, e.g. `subscriber in <dd>`.
 */
export function wordsBrokenAcrossLines(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const mayBreak = 'code, pre, kbd, samp, .id, .url, input, textarea, select, script, style';
    const broken: string[] = [];
    const hidden = (element: Element) => {
      for (let box: Element | null = element; box !== null; box = box.parentElement) {
        const rect = box.getBoundingClientRect();
        if (rect.width <= 1 || rect.height <= 1) return true;
      }
      return false;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (parent === null || parent.closest(mayBreak) !== null || hidden(parent)) continue;
      const text = node.textContent ?? '';
      // A date and a clock time are words too: a break after a hyphen of a date cuts it.
      for (const word of text.matchAll(
        /\d{4}-\d{2}-\d{2}|\d{2}:\d{2}(?::\d{2})?|[\p{L}\p{N}]{2,}/gu,
      )) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set(
          Array.from(range.getClientRects())
            .filter((rect) => rect.width > 0)
            .map((rect) => Math.round(rect.top)),
        );
        if (lines.size > 1) broken.push(`${word[0]} in <${parent.tagName.toLowerCase()}>`);
      }
    }
    return broken;
  });
}
