/**
 * A client generated from the gateway's OpenAPI document, as a user outside this repository
 * would make one: openapi-typescript writes the types, a small program uses them through
 * openapi-fetch, `tsc` checks it in strict mode, then Node runs it against the gateway.
 * Everything lives in a temporary folder (its `node_modules` a link to this repository's).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/**
 * The program: a payment, a transfer with an `Idempotency-Key` and metadata (sent twice: the
 * second answer is the replay), a typed 404. It prints what it saw as one JSON line.
 */
export const CLIENT_PROGRAM = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

type Transfer = components['schemas']['PartialTransfer'];

const [baseUrl = '', token = ''] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });

const reference = \`pay-\${crypto.randomUUID()}\`;
const payment = await client.POST('/payments/initialize', {
  params: { header: { 'Idempotency-Key': \`key-\${reference}\` } },
  body: { email: 'ada@example.com', amount: '5000.00', currency: 'NGN', reference },
});
if (payment.error !== undefined) throw new Error(payment.error.message);
const checkout: string = payment.data.authorization_url;

const key = \`key-\${crypto.randomUUID()}\`;
const send = () =>
  client.POST('/disbursements/initialize', {
    params: { header: { 'Idempotency-Key': key } },
    body: {
      customer_name: 'Ada Obi',
      customer_email: 'ada@example.com',
      reference: \`tr-\${key}\`,
      amount: 2500.5,
      currency: 'NGN',
      destination_bank_code: '058',
      destination_bank_account: '0123456789',
      destination_bank_name: 'GTBank',
      metadata: { order: 'A-1', lines: [1, 2] },
    },
  });
const first = await send();
const again = await send();
if (first.error !== undefined) throw new Error(first.error.message);
const answer = first.data;
const transfer: Transfer = 'data' in answer ? answer.data : answer;

const missing = await client.GET('/payments/verify/{reference}', {
  params: { path: { reference: 'pay-none' } },
});
const code: string | undefined = missing.error?.code;

console.log(
  JSON.stringify({
    checkout,
    transfer: { reference: transfer.reference, status: transfer.status },
    replayed: again.response.headers.get('Idempotent-Replayed'),
    missing: { status: missing.response.status, code },
  }),
);
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2023', 'dom'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['*.ts'],
};

/** What one step printed and how it ended. */
interface StepResult {
  readonly status: number | null;
  readonly output: string;
}

/** A generated client project in a temporary folder. */
export interface ClientProject {
  /** openapi-typescript's run over the document. */
  readonly generate: StepResult;
  /** Type-checks `program` (strict) next to the generated types. */
  typecheck(program: string): StepResult;
  /** Runs the last type-checked program with Node against `baseUrl`. */
  run(baseUrl: string, token: string): StepResult;
  /** Removes the folder. */
  remove(): void;
}

/**
 * Writes `doc` to a temporary folder and generates its types there with openapi-typescript.
 *
 * @param doc - the OpenAPI document, as served.
 * @returns the project.
 */
export function generateClient(doc: unknown): ClientProject {
  const folder = mkdtempSync(join(tmpdir(), 'edgepay-openapi-client-'));
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'), 'dir');
  writeFileSync(join(folder, 'openapi.json'), JSON.stringify(doc));
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  const step = (command: string, args: readonly string[]): StepResult => {
    const result = spawnSync(command, args, {
      cwd: folder,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  };
  const generate = step(bin('openapi-typescript'), ['openapi.json', '-o', 'schema.ts']);
  return {
    generate,
    typecheck: (program) => {
      writeFileSync(join(folder, 'program.ts'), program);
      return step(bin('tsc'), ['-p', 'tsconfig.json']);
    },
    run: (baseUrl, token) => step(process.execPath, ['program.ts', baseUrl, token]),
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
