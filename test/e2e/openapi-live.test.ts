import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NpmStartStack, startNpmStart } from '../support/npm-start.ts';
import { ResponseChecker } from '../support/openapi-responses.ts';
import { CLIENT_PROGRAM, generateClient } from './openapi-client.ts';
import { sendGatewayTraffic } from './openapi-traffic.ts';

// Sends the gateway's own traffic, every operation of its OpenAPI document with its success
// and its errors, through `npm start`'s stack, and holds every answer (status, documented
// headers, body) to the document the gateway itself serves; then generates a typed client
// from that document and runs a program written with it against the same stack.
const GATEWAY_PORT = 18827;
const SANDBOX_PORT = 18828;
const RECEIVER_PORT = 18829;
/** The caller and admin tokens, and the merchant secret, of `.dev.vars.example`. */
const CALLER_TOKEN = 'dev-gateway-token';
const ADMIN_TOKEN = 'dev-admin-token';
const MERCHANT = { keyId: 'sandbox-key', secret: 'sandbox-secret' };

type Json = Record<string, unknown>;

let stack: NpmStartStack | undefined;
let checker: ResponseChecker;
let operations: string[];
let doc: Json;

beforeAll(async () => {
  stack = await startNpmStart({
    gateway: GATEWAY_PORT,
    sandbox: SANDBOX_PORT,
    receiver: RECEIVER_PORT,
  });
  const response = await fetch(`http://127.0.0.1:${GATEWAY_PORT}/openapi.json`, {
    headers: { Authorization: `Bearer ${CALLER_TOKEN}` },
  });
  expect(response.status).toBe(200);
  doc = (await response.json()) as Json;
  checker = new ResponseChecker(doc);
  operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
}, 100_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the OpenAPI document against live answers', () => {
  it('should describe every answer of every operation, successes and errors', async () => {
    const answers = await sendGatewayTraffic(
      {
        gatewayPort: GATEWAY_PORT,
        sandboxPort: SANDBOX_PORT,
        receiverPort: RECEIVER_PORT,
        callerToken: CALLER_TOKEN,
        adminToken: ADMIN_TOKEN,
        merchant: MERCHANT,
      },
      operations,
    );

    const violations = answers.flatMap((answer) => checker.violations(answer));
    expect(violations).toEqual([]);
    // Every operation answered with its success at least once.
    const succeeded = new Set(
      answers
        .filter((answer) => answer.status < 300)
        .map((answer) => checker.operationOf(answer.method, answer.path)),
    );
    expect(operations.filter((operation) => !succeeded.has(operation))).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(41);
    // The error statuses the traffic above provokes.
    const statuses = new Set(answers.map((answer) => answer.status));
    expect([...statuses].filter((status) => status >= 400).sort()).toEqual(
      expect.arrayContaining([400, 401, 404, 409, 415, 422]),
    );
    expect(answers.some((answer) => answer.headers.get('Idempotent-Replayed') === 'true')).toBe(
      true,
    );
    expect(answers.some((answer) => answer.headers.get('X-Cache') === 'HIT')).toBe(true);

    // Each success body is pinned down: the same answer with its fields' types swapped
    // breaks the document (a schema that takes anything would let it through).
    const tampered = answers
      .filter((answer) => answer.status < 300 && answer.body !== '')
      .map((answer) => ({ ...answer, body: JSON.stringify(swapTypes(JSON.parse(answer.body))) }))
      .filter((answer) => answer.body !== JSON.stringify({ status: 'ok' }));
    expect(tampered.length).toBeGreaterThan(operations.length);
    const accepted = tampered.filter((answer) => checker.violations(answer).length === 0);
    expect(accepted.map((answer) => `${answer.method} ${answer.path}`)).toEqual([]);
  });
});

/**
 * A body with every string turned into a number and every number into a string, except the
 * envelope's own `status` and `message` at the top.
 */
function swapTypes(value: unknown, top = true): unknown {
  if (typeof value === 'string') return value.length;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map((item) => swapTypes(item, false));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      top && (key === 'status' || key === 'message') ? field : swapTypes(field, false),
    ]),
  );
}

describe('a client generated from the OpenAPI document', () => {
  it('should type-check in strict mode and run against the gateway', () => {
    const project = generateClient(doc);
    try {
      expect(project.generate.status, project.generate.output).toBe(0);
      const typecheck = project.typecheck(CLIENT_PROGRAM);
      expect(typecheck.output).toBe('');
      expect(typecheck.status).toBe(0);
      const run = project.run(`http://127.0.0.1:${GATEWAY_PORT}`, CALLER_TOKEN);
      expect(run.status, run.output).toBe(0);
      expect(JSON.parse(run.output)).toEqual({
        checkout: expect.stringMatching(`^http://127.0.0.1:${SANDBOX_PORT}/checkout/pay-`),
        transfer: { reference: expect.stringMatching(/^tr-key-/), status: 'processing' },
        replayed: 'true',
        missing: { status: 404, code: 'not_found' },
      });
    } finally {
      project.remove();
    }
  }, 120_000);

  it('should refuse a program that leaves out a required Idempotency-Key', () => {
    const project = generateClient(doc);
    try {
      const broken = CLIENT_PROGRAM.replace("params: { header: { 'Idempotency-Key': key } },", '');
      expect(broken).not.toBe(CLIENT_PROGRAM);
      const typecheck = project.typecheck(broken);
      expect(typecheck.status).toBe(2);
      expect(typecheck.output).toContain('Idempotency-Key');
    } finally {
      project.remove();
    }
  }, 120_000);
});
