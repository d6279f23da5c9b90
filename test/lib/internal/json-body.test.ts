/**
 * lib/internal/json-body.ts, the one JSON request body reader of the gateway and the
 * sandbox: each check in its order, and the refusal each one gives. The same bodies
 * through the real gateway and the real sandbox: test/worker/shared-rules.test.ts.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  BodyRejectedError,
  checkBodySize,
  parseJsonBody,
  readBody,
  readJsonBody,
  requestIssues,
} from '../../../lib/internal/json-body.ts';

const Schema = v.object({ amount: v.number(), currency: v.string() });
const encode = (text: string) => new TextEncoder().encode(text);

function refusal(run: () => unknown): BodyRejectedError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BodyRejectedError);
    return error as BodyRejectedError;
  }
  throw new Error('expected a BodyRejectedError');
}

async function rejection(promise: Promise<unknown>): Promise<BodyRejectedError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(BodyRejectedError);
  return error as BodyRejectedError;
}

/** A POST whose body is `count` chunks of `size` bytes, counting the chunks pulled. */
function streamed(count: number, size: number, headers: Record<string, string> = {}) {
  let pulled = 0;
  // No high-water mark: the stream is pulled only when read.
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === count) return controller.close();
        pulled++;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      },
    },
    { highWaterMark: 0 },
  );
  const request = new Request('http://sandbox.test/x', {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
  } as RequestInit);
  return { request, pulled: () => pulled };
}

describe('json-body', () => {
  describe('checkBodySize', () => {
    it('should accept a body of exactly the limit', () => {
      expect(() => checkBodySize(new Headers({ 'Content-Length': '10' }), 10, 10)).not.toThrow();
    });

    it('should refuse more bytes than the limit with 413', () => {
      const error = refusal(() => checkBodySize(new Headers(), 11, 10));
      expect(error).toMatchObject({
        status: 413,
        code: 'payload_too_large',
        message: 'Request body exceeds 10 bytes',
        issues: undefined,
      });
    });

    it('should refuse a declared Content-Length over the limit before any byte is read', () => {
      const error = refusal(() => checkBodySize(new Headers({ 'Content-Length': '11' }), 0, 10));
      expect(error.status).toBe(413);
    });

    it('should ignore a Content-Length that is not a number', () => {
      expect(() => checkBodySize(new Headers({ 'Content-Length': 'lots' }), 3, 10)).not.toThrow();
    });
  });

  describe('readBody', () => {
    it('should read the exact bytes of a body within the limit', async () => {
      const bytes = new Uint8Array([0x7b, 0x7d, 0xff]);
      const request = new Request('http://sandbox.test/x', { method: 'POST', body: bytes });
      expect(await readBody(request, 3)).toEqual(bytes);
    });

    it('should refuse a declared length over the limit without reading the body', async () => {
      const big = streamed(100, 100, { 'Content-Length': '10000' });
      expect((await rejection(readBody(big.request, 1000))).status).toBe(413);
      expect(big.pulled()).toBe(0);
    });

    it('should stop reading a longer stream soon after the limit', async () => {
      const big = streamed(1000, 1024);
      expect((await rejection(readBody(big.request, 2048))).status).toBe(413);
      expect(big.pulled()).toBeLessThan(10);
    });

    it('should read no body as empty', async () => {
      expect((await readBody(new Request('http://sandbox.test/x'), 10)).byteLength).toBe(0);
    });
  });

  describe('parseJsonBody', () => {
    const JSON_TYPE = 'application/json';

    it('should give back the exact bytes, their text and the output', () => {
      const bytes = encode('{ "amount": 5, "currency": "NGN", "note": "é" }');
      const body = parseJsonBody(bytes, JSON_TYPE, Schema);
      expect(body.bytes).toBe(bytes);
      expect(body.text).toBe('{ "amount": 5, "currency": "NGN", "note": "é" }');
      expect(body.value).toEqual({ amount: 5, currency: 'NGN' });
    });

    it.each([
      ['application/json'],
      ['application/json; charset=utf-8'],
      ['Application/JSON;charset="UTF-8"'],
      ['application/vnd.edgepay+json'],
      ['application/problem+json; foo=bar'],
    ])('should accept %s', (type) => {
      expect(parseJsonBody(encode('{"amount":1,"currency":"NGN"}'), type, Schema).value).toEqual({
        amount: 1,
        currency: 'NGN',
      });
    });

    it.each([
      [null],
      ['text/plain'],
      ['text/json'],
      ['application/jsonp'],
      ['application/json; charset=iso-8859-1'],
      ['multipart/form-data; boundary=x'],
    ])('should refuse %j with 415', (type) => {
      expect(refusal(() => parseJsonBody(encode('{}'), type, Schema))).toMatchObject({
        status: 415,
        code: 'unsupported_media_type',
        message: 'Content-Type must be application/json (UTF-8)',
        issues: undefined,
      });
    });

    it('should refuse an empty body with 400 whatever the Content-Type', () => {
      expect(refusal(() => parseJsonBody(new Uint8Array(), 'text/plain', Schema))).toMatchObject({
        status: 400,
        code: 'validation_failed',
        message: 'The request body is invalid',
        issues: [{ path: '', message: 'Expected a JSON object body' }],
      });
    });

    it.each([
      ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'Expected UTF-8 text'],
      [
        'a byte order mark',
        new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
        'Expected JSON without a byte order mark',
      ],
      ['truncated JSON', encode('{"amount":'), 'Expected a valid JSON document'],
      ['whitespace only', encode('  '), 'Expected a valid JSON document'],
      ['a NaN literal', encode('{"amount":NaN}'), 'Expected a valid JSON document'],
      ['an array', encode('[]'), 'Expected a JSON object'],
      ['null', encode('null'), 'Expected a JSON object'],
      ['a string', encode('"x"'), 'Expected a JSON object'],
    ])('should refuse %s with one issue at the root', (_, bytes, message) => {
      expect(refusal(() => parseJsonBody(bytes, JSON_TYPE, Schema))).toMatchObject({
        status: 400,
        code: 'validation_failed',
        message: 'The request body is not a JSON object',
        issues: [{ path: '', message }],
      });
    });

    it.each([
      ['{"amount":1,"amount":2,"currency":"NGN"}', 'amount'],
      ['{"a":{"b":[{"k":1},{"k":1,"\\u006b":2}]}}', 'a.b.1.k'],
      ['{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ])('should refuse the repeated key in %s at %s', (text, path) => {
      expect(refusal(() => parseJsonBody(encode(text), JSON_TYPE, Schema))).toMatchObject({
        status: 400,
        message: 'The request body is invalid',
        issues: [{ path, message: 'Duplicate key: each key may appear once' }],
      });
    });

    it('should accept the same key in different objects', () => {
      const text = '{"amount":1,"currency":"NGN","m":{"amount":2},"n":[{"amount":3}]}';
      expect(parseJsonBody(encode(text), JSON_TYPE, Schema).value).toEqual({
        amount: 1,
        currency: 'NGN',
      });
    });

    it('should list every schema issue with its dot path', () => {
      const error = refusal(() => parseJsonBody(encode('{"amount":"5"}'), JSON_TYPE, Schema));
      expect(error).toMatchObject({ status: 400, message: 'The request body is invalid' });
      expect(error.issues).toEqual([
        { path: 'amount', message: expect.stringContaining('Expected number') },
        { path: 'currency', message: 'Required' },
      ]);
    });
  });

  describe('readJsonBody', () => {
    it('should read, check and parse a body', async () => {
      const request = new Request('http://sandbox.test/x', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"amount":2,"currency":"NGN"}',
      });
      const body = await readJsonBody(request, Schema);
      expect(body.text).toBe('{"amount":2,"currency":"NGN"}');
      expect(body.value).toEqual({ amount: 2, currency: 'NGN' });
    });

    it('should refuse an oversized body with 413 before its media type', async () => {
      const request = new Request('http://sandbox.test/x', {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        body: 'x'.repeat(11),
      });
      expect((await rejection(readJsonBody(request, Schema, 10))).status).toBe(413);
    });
  });

  describe('requestIssues', () => {
    it('should read a missing key as Required and an unknown one as Unknown field', () => {
      const strict = v.strictObject({ url: v.string(), nested: v.object({ id: v.string() }) });
      const result = v.safeParse(strict, { nested: {}, eventTypes: [] });
      expect(result.success).toBe(false);
      expect(requestIssues(result.issues ?? [])).toEqual([
        { path: 'url', message: 'Required' },
        { path: 'nested.id', message: 'Required' },
        { path: 'eventTypes', message: 'Unknown field' },
      ]);
    });

    it('should keep the schema message at the root', () => {
      const result = v.safeParse(v.object({}), null);
      expect(requestIssues(result.issues ?? [])).toEqual([
        { path: '', message: expect.stringContaining('Expected Object') },
      ]);
    });
  });
});
