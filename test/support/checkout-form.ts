/**
 * The sandbox checkout page as a customer's browser sees it (docs/payments-api.md,
 * "Endpoints > Payments"): open the page, find its pay and cancel forms, submit one.
 */
import { expect } from 'vitest';

/** A `<form>` of the checkout page as a browser would submit it. */
export interface CheckoutForm {
  action: string;
  method: string;
  /** Named inputs and selects (a select's selected, else first, option). */
  fields: Record<string, string>;
  /** Named submit buttons: `{ name, value, label }`. */
  buttons: Array<{ name: string; value: string; label: string }>;
}

function attr(source: string, name: string): string | undefined {
  const value = new RegExp(`\\b${name}\\s*=\\s*["']([^"']*)["']`, 'i').exec(source)?.[1];
  return value === undefined ? undefined : decodeEntities(value);
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Extracts the `<form>` elements of the checkout page. */
function parseForms(html: string): CheckoutForm[] {
  const forms: CheckoutForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const inner = match[2] ?? '';
    const fields: Record<string, string> = {};
    for (const input of inner.matchAll(/<input\b([^>]*)>/gi)) {
      const name = attr(input[1] ?? '', 'name');
      const type = (attr(input[1] ?? '', 'type') ?? 'text').toLowerCase();
      if (name !== undefined && type !== 'submit')
        fields[name] = attr(input[1] ?? '', 'value') ?? '';
    }
    for (const select of inner.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/gi)) {
      const name = attr(select[1] ?? '', 'name');
      const options = [...(select[2] ?? '').matchAll(/<option\b([^>]*)>/gi)].map((o) => o[1] ?? '');
      const chosen = options.find((o) => /\bselected\b/i.test(o)) ?? options[0];
      if (name !== undefined && chosen !== undefined) fields[name] = attr(chosen, 'value') ?? '';
    }
    const buttons: CheckoutForm['buttons'] = [];
    for (const button of inner.matchAll(/<(button|input)\b([^>]*)>(?:([\s\S]*?)<\/button>)?/gi)) {
      const attributes = button[2] ?? '';
      const isSubmit =
        button[1]?.toLowerCase() === 'button'
          ? (attr(attributes, 'type') ?? 'submit').toLowerCase() === 'submit'
          : (attr(attributes, 'type') ?? '').toLowerCase() === 'submit';
      if (!isSubmit) continue;
      buttons.push({
        name: attr(attributes, 'name') ?? '',
        value: attr(attributes, 'value') ?? '',
        label: (button[3] ?? '').replace(/<[^>]*>/g, '').trim(),
      });
    }
    forms.push({
      action: attr(match[1] ?? '', 'action') ?? '',
      method: (attr(match[1] ?? '', 'method') ?? 'get').toLowerCase(),
      fields,
      buttons,
    });
  }
  return forms;
}

/** The choice a customer makes on the checkout page. */
export type Choice = 'pay' | 'cancel';

function isChoice(button: CheckoutForm['buttons'][number], choice: Choice): boolean {
  const text = `${button.value} ${button.label}`;
  return choice === 'cancel' ? /cancel|abandon/i.test(text) : /\bpay\b/i.test(text);
}

/**
 * Finds the form (and its submit button) that pays or cancels.
 *
 * @throws when the page has no such button.
 */
export function findChoice(
  html: string,
  choice: Choice,
): { form: CheckoutForm; button: CheckoutForm['buttons'][number] } {
  for (const form of parseForms(html)) {
    const button = form.buttons.find((b) => isChoice(b, choice));
    if (button !== undefined) return { form, button };
  }
  throw new Error(`no ${choice} button in checkout page:\n${html}`);
}

/**
 * Submits the pay or cancel choice as a browser would (urlencoded, redirects not followed).
 *
 * @param pageUrl - the checkout page's URL (the base of the form action).
 * @param html - the page, as {@link openCheckout} answered it.
 * @param fieldOverrides - fields to change, e.g. `{ payment_method: 'ussd' }`.
 */
export async function submit(
  pageUrl: string,
  html: string,
  choice: Choice,
  fieldOverrides: Record<string, string> = {},
): Promise<Response> {
  const { form, button } = findChoice(html, choice);
  const target = new URL(form.action === '' ? pageUrl : form.action, pageUrl);
  const fields = { ...form.fields, ...fieldOverrides };
  if (button.name !== '') fields[button.name] = button.value;
  return fetch(target, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

/** Opens a checkout page, asserts it answered 200 and answers its HTML. */
export async function openCheckout(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}
