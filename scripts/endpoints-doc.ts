// Generates docs/endpoints.md from the SDK's endpoint table, so the reference page cannot
// drift from the code. Run: `npm run docs:endpoints`; a test checks the page is current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as v from 'valibot';
import { ENDPOINTS, type Endpoint, idempotencyOf, listEndpoints } from '../lib/index.ts';

/** Where the page lives, from the repository root. */
export const ENDPOINTS_DOC_PATH = 'docs/endpoints.md';

type Entries = Record<string, v.GenericSchema & { type: string }>;

// The fields of an object schema, also behind a pipe of cross-field checks.
function entriesOf(schema: v.GenericSchema | undefined): Entries {
  const candidate = schema as { entries?: Entries; pipe?: Array<{ entries?: Entries }> };
  return candidate?.entries ?? candidate?.pipe?.[0]?.entries ?? {};
}

function fieldList(schema: v.GenericSchema | undefined): string {
  const fields = Object.entries(entriesOf(schema)).map(([name, field]) =>
    field.type === 'optional' ? `${name}?` : name,
  );
  return fields.length === 0 ? '—' : fields.map((name) => `\`${name}\``).join(', ');
}

function lookupOf(endpoint: Endpoint, names: Map<Endpoint, string>): string {
  const lookup = endpoint.lookup;
  if (lookup === undefined) return endpoint.effect === 'read' ? 'safe to repeat' : 'never resent';
  return `\`${names.get(lookup.endpoint)}\` by \`${lookup.field}\``;
}

/**
 * The page's Markdown: one table row per endpoint of the table, in matching order.
 *
 * @returns the whole document, ending with a newline.
 */
export function renderEndpointsDoc(): string {
  const endpoints = listEndpoints();
  // Lookups point at the table's entries; name them by their keys.
  const names = new Map<Endpoint, string>(
    Object.entries(ENDPOINTS).map(([name, endpoint]) => [endpoint, name]),
  );
  const rows = endpoints.map((e) =>
    [
      `\`${e.name}\``,
      `\`${e.method} ${e.path}\``,
      e.unsigned ? 'unsigned' : 'signed',
      e.effect,
      idempotencyOf(e) === 'none' ? '—' : idempotencyOf(e),
      lookupOf(e, names),
      fieldList(e.body),
      fieldList(e.query),
    ].join(' | '),
  );
  return [
    '# Endpoints',
    '',
    '<!-- Generated from lib/endpoints.ts by `npm run docs:endpoints`; do not edit by hand. -->',
    '',
    'Every endpoint of the payments API, as the SDK, the sandbox and the gateway read them',
    'from one table (`ENDPOINTS` in `lib/endpoints.ts`). The gateway serves each with the same',
    'method and path behind a caller token. What the API means by them (signing, errors, limits,',
    'webhooks, resources and their states) is in [docs/payments-api.md](payments-api.md).',
    '',
    '- **auth**: `signed` requests carry `X-Key-Id`, `X-Timestamp` and `X-Signature`, the',
    '  lowercase hex HMAC-SHA256 of `{timestamp}:{raw body}` keyed with the API secret.',
    '- **effect**: `read` changes nothing; `write` changes state without moving money; `money`',
    '  creates or moves money.',
    '- **Idempotency-Key** (gateway): required on `money` endpoints, honoured when given on the',
    '  other writes.',
    '- **after an ambiguous failure**: how a retry stays safe. A `money` endpoint with a lookup',
    '  is resent only once the lookup shows its record does not exist (the SDK retrying, the',
    '  gateway recovering a stale idempotency claim); one without is never resent.',
    '- **body** and **query**: the fields validated before anything is sent (`?` optional).',
    '',
    '| name | method and path | auth | effect | Idempotency-Key | after an ambiguous failure | body | query |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row} |`),
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL(`../${ENDPOINTS_DOC_PATH}`, import.meta.url), renderEndpointsDoc());
  console.log(`wrote ${ENDPOINTS_DOC_PATH}`);
}
