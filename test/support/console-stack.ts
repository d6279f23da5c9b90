/**
 * What every console browser test starts and calls: `npm start`'s stack on ports of the
 * test's own, a delivery receiver standing in for the subscribers, and (for a test that runs
 * in one page throughout) a real Chromium page; then the console's sign-in, the admin API,
 * the receiver's answers, a payment paid in the sandbox and a webhook signed as the payment
 * service signs them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page, Request } from 'playwright-core';
import { expect } from 'vitest';
import { signRequest } from '../../lib/index.ts';
import { type BrowserOptions, type BrowserPage, openBrowserPage } from './browser.ts';
import { type AdminAnswer, adminAnswer } from './child-process.ts';
import { type DeliveryReceiver, startDeliveryReceiver } from './delivery-receiver.ts';
import { type StackPorts, startNpmStart } from './npm-start.ts';

const root = join(import.meta.dirname, '..', '..');
/** The page size of a desktop, in CSS pixels: the console tests' page unless they say otherwise. */
export const DESKTOP = { width: 1280, height: 900 };
/** The admin, caller and merchant credentials of `.dev.vars.example`, which `npm start` reads. */
export const ADMIN_TOKEN = 'dev-admin-token';
const CALLER_TOKEN = 'dev-gateway-token';
const MERCHANT = { keyId: 'sandbox-key', secret: 'sandbox-secret' };

/** One request the receiver got, as its `GET /__received` lists it. */
interface ReceivedRequest {
  readonly headers: Record<string, string>;
  /** The exact body, as UTF-8 text (what the signature covers). */
  readonly body: string;
}

/** A running stack and the calls the console tests make to it. */
export interface ConsoleStack {
  /** `http://127.0.0.1:<gateway port>`; the console is at `/console/`. */
  readonly gatewayUrl: string;
  /** `http://127.0.0.1:<sandbox port>`. */
  readonly sandboxUrl: string;
  /** Everything the stack printed so far (stdout and stderr), its banner included. */
  output(): string;
  /** The stand-in subscribers: `<url>/<any>?key=K` records under `K`. */
  readonly receiver: DeliveryReceiver;
  /** Signs `page` in to the console with the admin token; resolves on the Events page. */
  signIn(page: Page): Promise<void>;
  /** One admin API call with the admin token: its status and parsed JSON body. */
  admin(method: string, path: string, body?: unknown): Promise<AdminAnswer>;
  /** Makes the receiver answer `status` to every later request under `key`. */
  receiverAnswers(key: string, status: number): Promise<void>;
  /** What the receiver got under `key`, oldest first. */
  received(key: string): Promise<ReceivedRequest[]>;
  /**
   * Initializes a payment of `amount` NGN (major units, as text) through the gateway and
   * completes it successfully in the sandbox, which then sends its charge_success webhook.
   */
  pay(reference: string, amount: string): Promise<void>;
  /**
   * Sends `event` (a webhook envelope: event_type, event_id, timestamp, data) to the
   * gateway's `POST /webhooks` as JSON, signed with the merchant secret; expects a 200.
   */
  ingest(event: Readonly<Record<string, unknown>>): Promise<void>;
  /** Stops everything started: the browser, the receiver and the stack. */
  stop(): Promise<void>;
}

/** A stack with the one page its test runs in. */
export interface ConsolePageStack extends ConsoleStack {
  readonly browser: BrowserPage;
  readonly page: Page;
  /** Saves a full-page screenshot of the page as `test-results/<artifacts>/<name>.png`. */
  screenshot(name: string): Promise<void>;
}

/** How the one page of a {@link ConsolePageStack} is opened. */
export interface ConsolePageOptions {
  /** The page's size in CSS pixels. @default {@link DESKTOP} */
  readonly viewport?: { width: number; height: number };
  /** The browser's locale settings. @default the machine's own */
  readonly browser?: BrowserOptions;
  /** The longest any one wait in the page may take, in milliseconds. */
  readonly waitMs: number;
  /** The folder under test-results/ for the page's screenshots, e.g. `console-events`. */
  readonly artifacts: string;
}

/**
 * Starts the stack on `ports`, a delivery receiver on a free port and, when `page` is
 * given, a Chromium page; all at once. If any fails to start, the others are stopped.
 *
 * @throws the first start-up failure.
 */
export async function startConsoleStack(ports: StackPorts): Promise<ConsoleStack>;
export async function startConsoleStack(
  ports: StackPorts,
  page: ConsolePageOptions,
): Promise<ConsolePageStack>;
export async function startConsoleStack(
  ports: StackPorts,
  page?: ConsolePageOptions,
): Promise<ConsoleStack> {
  const [stack, receiver, browser] = await Promise.allSettled([
    startNpmStart(ports),
    startDeliveryReceiver(),
    page === undefined ? undefined : openBrowserPage(page.viewport ?? DESKTOP, page.browser),
  ]);
  if (
    stack.status === 'rejected' ||
    receiver.status === 'rejected' ||
    browser.status === 'rejected'
  ) {
    await Promise.all([
      stack.status === 'fulfilled' ? stack.value.stop() : undefined,
      receiver.status === 'fulfilled' ? receiver.value.close() : undefined,
      browser.status === 'fulfilled' ? browser.value?.browser.close() : undefined,
    ]);
    throw [stack, receiver, browser].find((started) => started.status === 'rejected')?.reason;
  }
  const { gatewayUrl, sandboxUrl } = stack.value;
  const started: ConsoleStack = {
    gatewayUrl,
    sandboxUrl,
    output: () => stack.value.output(),
    receiver: receiver.value,
    signIn: async (signingIn) => {
      await signingIn.goto(`${gatewayUrl}/console/`);
      await signingIn.getByLabel('Admin token', { exact: true }).fill(ADMIN_TOKEN);
      await signingIn.getByRole('button', { name: 'Sign in' }).click();
      await signingIn.getByRole('heading', { name: 'Events', level: 1 }).waitFor();
    },
    admin: (method, path, body) => adminAnswer(gatewayUrl, method, path, body),
    receiverAnswers: async (key, status) => {
      const answer = await fetch(`${receiver.value.url}/__status?key=${key}&status=${status}`, {
        method: 'PUT',
      });
      expect(answer.status).toBe(200);
    },
    received: async (key) => {
      const answer = await fetch(`${receiver.value.url}/__received?key=${key}`);
      return ((await answer.json()) as { data: ReceivedRequest[] }).data;
    },
    pay: async (reference, amount) => {
      const initialized = await fetch(`${gatewayUrl}/payments/initialize`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${CALLER_TOKEN}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': reference,
        },
        body: JSON.stringify({ email: 'ada@example.com', amount, currency: 'NGN', reference }),
      });
      expect(initialized.status).toBe(200);
      const completed = await fetch(`${sandboxUrl}/__sandbox/payments/${reference}/complete`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ outcome: 'success' }),
      });
      expect(completed.status).toBe(200);
    },
    ingest: async (event) => {
      const body = JSON.stringify(event);
      const ingested = await fetch(`${gatewayUrl}/webhooks`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(await signRequest({ ...MERCHANT, body })),
        },
        body,
      });
      expect(ingested.status).toBe(200);
    },
    stop: async () => {
      await Promise.all([
        browser.value?.browser.close(),
        receiver.value.close(),
        stack.value.stop(),
      ]);
    },
  };
  if (page === undefined || browser.value === undefined) return started;
  const opened = browser.value;
  opened.page.setDefaultTimeout(page.waitMs);
  const artifacts = join(root, 'test-results', page.artifacts);
  mkdirSync(artifacts, { recursive: true });
  const withPage: ConsolePageStack = {
    ...started,
    browser: opened,
    page: opened.page,
    screenshot: async (name) => {
      await opened.page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    },
  };
  return withPage;
}

/** Text the console must refuse where it was typed, and the requests it must not send for it. */
export interface RefusedInput {
  /** The form field the text is typed into. */
  readonly field: Locator;
  readonly text: string;
  /** The name of the button that submits the form. */
  readonly submit: string;
  /** The whole error the console shows for the text. */
  readonly message: string;
  /** Picks the requests that would carry the refused text to the admin API. */
  readonly carries: (request: Request) => boolean;
}

/**
 * Types `refused.text` into its field and submits the form, then expects the console to
 * refuse it beside the field: the message shown, the field marked invalid, and no request
 * that `refused.carries` picks sent meanwhile.
 */
export async function expectRefused(page: Page, refused: RefusedInput): Promise<void> {
  const sent: string[] = [];
  const record = (request: Request) => {
    if (refused.carries(request)) {
      sent.push(`${request.method()} ${request.url()} ${request.postData() ?? ''}`);
    }
  };
  page.on('request', record);
  try {
    await refused.field.fill(refused.text);
    await page.getByRole('button', { name: refused.submit }).click();
    await page.getByText(refused.message).waitFor();
    expect(await refused.field.getAttribute('aria-invalid')).toBe('true');
    expect(sent).toEqual([]);
  } finally {
    page.off('request', record);
  }
}
