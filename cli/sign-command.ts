// `edgepay sign`: the signature headers of one request, for a shell (curl, httpie) that
// calls the payments API or the sandbox without the SDK.
import process from 'node:process';
import { parseArgs } from 'node:util';
import { signRequest } from '../lib/signing.ts';
import { resolveOptions } from '../lib/testing/options.ts';
import { DEFAULT_SANDBOX_HOST, DEFAULT_SANDBOX_PORT } from './sandbox-server.ts';
import { UsageError } from './usage-error.ts';

/** The environment variable the secret is read from (never an argument: others see those). */
const SECRET_VARIABLE = 'EDGEPAY_SECRET';

/** The environment variable of the key id, when `--key-id` is not given. */
const KEY_ID_VARIABLE = 'EDGEPAY_KEY_ID';

/** The sandbox's own key id and secret, for the defaults and the examples. */
const SANDBOX = resolveOptions({});

/** `edgepay sign --help`. */
const SIGN_USAGE = `Usage: edgepay sign [options]

Prints the signature headers of one request to the payments API (or the sandbox): X-Key-Id,
X-Timestamp (now) and X-Signature, one "Name: value" line each, as curl's -H @- reads them.
The signature covers the exact body bytes, so send the very body you signed.

Options:
  --body <text>    the request body (default: read from stdin; --body '' for a request
                   without one, such as a GET)
  --key-id <id>    the merchant key id (default: $${KEY_ID_VARIABLE}, else the sandbox's
                   ${SANDBOX.keyId})
  -h, --help       show this help

The secret is read from $${SECRET_VARIABLE}, never from the command line, where other users
of the machine could read it.

Examples (a sandbox started by "edgepay sandbox", on its default port):
  BODY='{"email":"ada@example.com","amount":"2500.00","currency":"NGN","reference":"order-1"}'
  EDGEPAY_SECRET=${SANDBOX.secret} edgepay sign --body "$BODY" |
    curl -s -H @- -H 'Content-Type: application/json' -d "$BODY" \\
      http://${DEFAULT_SANDBOX_HOST}:${DEFAULT_SANDBOX_PORT}/payments/initialize
  EDGEPAY_SECRET=${SANDBOX.secret} edgepay sign --body '' |
    curl -s -H @- http://${DEFAULT_SANDBOX_HOST}:${DEFAULT_SANDBOX_PORT}/payments/verify/order-1
`;

/**
 * Runs `edgepay sign`: prints the three header lines to stdout.
 *
 * @param args - the arguments after `sign`.
 * @param stdin - where the body is read from when `--body` is not given.
 * @throws {UsageError} on an unknown option, a missing secret, or no body given on a
 *   terminal (the message names what is missing).
 */
export async function runSignCommand(
  args: string[],
  stdin: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
): Promise<void> {
  let values: { body?: string; 'key-id'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        body: { type: 'string' },
        'key-id': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), SIGN_USAGE);
  }
  if (values.help === true) {
    process.stdout.write(SIGN_USAGE);
    return;
  }
  const secret = process.env[SECRET_VARIABLE];
  if (secret === undefined || secret === '') {
    throw new UsageError(`${SECRET_VARIABLE} is not set: export the merchant secret`, SIGN_USAGE);
  }
  const keyId = values['key-id'] ?? process.env[KEY_ID_VARIABLE] ?? SANDBOX.keyId;
  const body = values.body ?? (await readBody(stdin));
  const headers = await signRequest({ keyId, secret, body });
  process.stdout.write(
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\n`)
      .join(''),
  );
}

/** The whole of stdin, as text; refused on a terminal, where nobody would type a body. */
async function readBody(stdin: NodeJS.ReadableStream & { isTTY?: boolean }): Promise<string> {
  if (stdin.isTTY === true) {
    throw new UsageError('no body: give --body, or pipe the body to stdin', SIGN_USAGE);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}
