/**
 * The response checker the live OpenAPI test relies on (test/support/openapi-responses.ts),
 * held to real answers of the sandbox emulator (the gateway passes success answers through
 * as they are) and to tampered copies of them and of the document: each mismatch must be
 * reported, so a wrong schema in the document fails the live test.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../lib/signing.ts';
import { createSandbox } from '../../lib/testing/index.ts';
import {
  buildGatewayDocument,
  type RecordedAnswer,
  ResponseChecker,
} from '../support/openapi-responses.ts';
import { transferBody } from '../support/payloads.ts';

type Json = Record<string, unknown>;

let doc: Json;
let checker: ResponseChecker;
let created: RecordedAnswer;
let verified: RecordedAnswer;

/** One signed call to an in-process sandbox, recorded as the gateway would answer it. */
async function call(
  sandbox: ReturnType<typeof createSandbox>,
  method: string,
  path: string,
  body?: unknown,
): Promise<RecordedAnswer> {
  const text = body === undefined ? '' : JSON.stringify(body);
  const signature = await signRequest({
    keyId: 'sandbox-key',
    secret: 'sandbox-secret',
    body: text,
  });
  const response = await sandbox.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method,
      headers: { ...signature, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: text }),
    }),
  );
  const headers = new Headers(response.headers);
  // The gateway's own header on every answer.
  headers.set('X-Request-Id', crypto.randomUUID());
  return { method, path, status: response.status, headers, body: await response.text() };
}

beforeAll(async () => {
  doc = await buildGatewayDocument();
  checker = new ResponseChecker(doc);
  const sandbox = createSandbox();
  const transfer = transferBody({ metadata: { order: 'A-1' } });
  created = await call(sandbox, 'POST', '/disbursements/initialize', transfer);
  verified = await call(sandbox, 'GET', `/disbursements/verify/${String(transfer.reference)}`);
  expect([created.status, verified.status]).toEqual([200, 200]);
});

/** The same answer with another body. */
function withBody(answer: RecordedAnswer, change: (body: Json) => void): RecordedAnswer {
  const body = JSON.parse(answer.body) as Json;
  change(body);
  return { ...answer, body: JSON.stringify(body) };
}

describe('ResponseChecker', () => {
  describe('operationOf', () => {
    it('should match a literal path before a templated one', () => {
      expect(checker.operationOf('GET', '/refunds/count-by-status')).toBe(
        'GET /refunds/count-by-status',
      );
      expect(checker.operationOf('GET', '/refunds/rf-1')).toBe('GET /refunds/{refund_reference}');
      expect(checker.operationOf('PUT', '/refunds/rf-1')).toBeUndefined();
    });
  });

  describe('violations', () => {
    it('should accept the answers of the payment service as the gateway passes them through', () => {
      expect(checker.violations(created)).toEqual([]);
      expect(checker.violations(verified)).toEqual([]);
    });

    it('should report a record field of the wrong type', () => {
      const tampered = withBody(verified, (body) => {
        (body.data as Json).amount = true;
      });
      expect(checker.violations(tampered)).toEqual([
        expect.stringMatching(/^GET \/disbursements\/verify\/\S+ 200: body: .*\/data\/amount/),
      ]);
    });

    it('should report a record without its state under either name', () => {
      const tampered = withBody(verified, (body) => {
        delete (body.data as Json).transfer_status;
      });
      expect(checker.violations(tampered)).not.toEqual([]);
    });

    it('should report a missing X-Request-Id, and a status the operation does not document', () => {
      const headers = new Headers(verified.headers);
      headers.delete('X-Request-Id');
      expect(checker.violations({ ...verified, headers })).toEqual([
        expect.stringContaining('header X-Request-Id is required'),
      ]);
      // A proxied route's other statuses are its `default`: the error body.
      expect(checker.violations({ ...verified, status: 418 })).toEqual([
        expect.stringMatching(/ 418: body: .*must have required property 'code'/),
      ]);
      const admin = { ...verified, method: 'GET', path: '/admin/subscriptions', status: 418 };
      expect(checker.violations(admin)).toEqual([
        'GET /admin/subscriptions 418: status not documented for GET /admin/subscriptions',
      ]);
    });

    it('should report the real answer once the document says something else', () => {
      const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
      const transfer = schemas.Transfer as { properties: Record<string, unknown> };
      const tampered = structuredClone(doc);
      const tamperedTransfer = (tampered.components as { schemas: Record<string, Json> }).schemas
        .Transfer as { properties: Record<string, unknown> };
      tamperedTransfer.properties = { ...transfer.properties, amount: { type: 'string' } };
      expect(new ResponseChecker(tampered).violations(verified)).toEqual([
        expect.stringContaining('/data/amount must be string'),
      ]);
    });
  });
});
