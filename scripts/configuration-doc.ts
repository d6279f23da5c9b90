// Generates docs/configuration.md from the gateway's settings table, so the page cannot
// drift from the code. Run: `npm run docs:configuration`; a test checks the page is current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CROSS_RULES, SETTING_NAMES, SETTINGS } from '../worker/config.ts';

/** Where the page lives, from the repository root. */
export const CONFIGURATION_DOC_PATH = 'docs/configuration.md';

type Row = (typeof SETTINGS)[keyof typeof SETTINGS];

function defaultOf({ unset }: Row): string {
  if ('required' in unset) return 'none (required)';
  if ('off' in unset) return `unset: ${unset.off}`;
  return unset.default === '' ? 'empty' : `\`${unset.default}\``;
}

// A production rule's message says "outside local mode"; the column already says it.
function ruleText(problem: string): string {
  return problem.replace(' outside local mode', '');
}

function acceptedOf(row: Row): string {
  const rules = row.production ?? [];
  if (rules.length === 0) return row.doc;
  return `${row.doc}. *Production:* ${rules.map((rule) => ruleText(rule.problem)).join('; ')}`;
}

/**
 * The page's Markdown: what the gateway does with its settings, then one table row per
 * setting of the table, in its order.
 *
 * @returns the whole document, ending with a newline.
 */
export function renderConfigurationDoc(): string {
  const rows = SETTING_NAMES.map((name) => {
    const row: Row = SETTINGS[name];
    return `| \`${name}\` | ${row.kind} | ${defaultOf(row)} | ${acceptedOf(row)} |`;
  });
  return [
    '# Gateway configuration',
    '',
    '<!-- Generated from worker/config/table.ts by `npm run docs:configuration`; do not edit by hand. -->',
    '',
    'The gateway reads every setting once, with one schema built from one table',
    '(`SETTINGS` in `worker/config/table.ts`), when an isolate first handles a request.',
    'Variables live in `wrangler.toml` (`[vars]` and `[env.production.vars]`); secrets are set',
    'with `npx wrangler secret put NAME --env production` (locally: `.dev.vars`).',
    '',
    'If any setting is invalid, the gateway does not guess. Every route but `GET /healthz`',
    'answers 503 `configuration_error`, naming the variables but never their values, and',
    '`GET /healthz` answers 503 `{ "status": "misconfigured" }`, naming no setting: monitors',
    'and load balancers poll it and keep what it answers. With `?deep=1` and the admin token',
    '(`Authorization: Bearer <ADMIN_TOKEN>`) it names them:',
    '',
    '```json',
    '{ "status": "misconfigured", "invalid_settings": ["UPSTREAM_BASE_URL"] }',
    '```',
    '',
    'The admin token is then read on its own, and opens the names only when it and every',
    'setting its rules read (`GATEWAY_MODE`, `GATEWAY_CALLERS`, `UPSTREAM_SECRET`,',
    '`WEBHOOK_SECRET`) are valid; a wrong token gets the plain answer and counts as a failed',
    'admin sign-in (docs/gateway.md, "Health check").',
    '',
    'What is wrong with each is logged once per isolate (`wrangler tail`: event',
    '`config_invalid`, fields `setting` and `problem`). While the settings are invalid, webhook',
    'deliveries wait as `pending` and go out once the settings are fixed. `npm run deploy:check`',
    'applies the same checks before you deploy (docs/deploy.md).',
    '',
    '## Modes',
    '',
    '| `GATEWAY_MODE` | used by | rules |',
    '|---|---|---|',
    '| `production`, or unset | `wrangler.toml` | every rule below |',
    '| `local` | `npm start`, `.dev.vars.example`, the tests | the rules marked *production* are lifted |',
    '',
    'Local mode is only ever set on purpose. An unset mode is production, so a forgotten line',
    'can only make the gateway stricter.',
    '',
    '## Settings',
    '',
    'In the order problems are reported. A *production* rule holds outside local mode only.',
    '',
    '| name | kind | default | accepted values |',
    '|---|---|---|---|',
    ...rows,
    '',
    'Production rules between settings, each reported against the first variable named:',
    '',
    ...CROSS_RULES.map((rule) => `- \`${rule.variable}\` ${ruleText(rule.problem)}.`),
    '',
    "In every mode, `ADMIN_TOKEN` must differ from every caller's token, and callers' names and",
    'tokens are unique.',
    '',
    'Switches take `1`, `true`, `yes` or `on`, and `0`, `false`, `no` or `off`, in any case;',
    'empty means the default. Values that are not secrets may have spaces around them.',
    'Secrets are used exactly as set.',
    '',
    '## Where each environment gets its values',
    '',
    '- **Production** (`npx wrangler deploy --env production`): `[env.production.vars]` and the',
    "  secrets. `wrangler.toml`'s top level carries the same safe values, so a plain",
    '  `wrangler deploy` would ship nothing unsafe either. Both set each variable to its',
    '  default above (a test checks it), apart from `UPSTREAM_BASE_URL`, which has none, and',
    '  the development switches, which stay out.',
    '- **`npm start` and `wrangler dev`**: the top level, overridden by `.dev.vars` (created',
    '  from `.dev.vars.example`: `GATEWAY_MODE=local`, the sandbox upstream, rate limiting off,',
    '  `ALLOW_LOCAL_SUBSCRIBERS=true`, the local tokens). `npm start` also passes',
    "  `GATEWAY_MODE=local` and the sandbox's actual address itself.",
    '- **Tests**: the top level, with the bindings of `vitest.config.ts` (local mode). Tests of',
    '  the production rules set their own values.',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(new URL(`../${CONFIGURATION_DOC_PATH}`, import.meta.url), renderConfigurationDoc());
  console.log(`wrote ${CONFIGURATION_DOC_PATH}`);
}
