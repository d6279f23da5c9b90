import { describe, expect, it } from 'vitest';
import {
  ActivationNotInitiatedError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  createAPIError,
  DuplicateRefundError,
  InsufficientFundsError,
  InternalServerError,
  MandateNotActiveError,
  NotFoundError,
  RateLimitError,
  UnprocessableEntityError,
} from '../../lib/api-errors.ts';
import { PaymentsError } from '../../lib/errors.ts';

const failed = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  createAPIError({
    method: 'POST',
    url: 'https://api.example/disbursements/initialize',
    status,
    headers: new Headers(headers),
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('createAPIError', () => {
  it('should pick the class by status', () => {
    const classes = [400, 401, 404, 409, 422, 429, 500, 503, 418].map(
      (status) => failed(status, {}).constructor,
    );
    expect(classes).toEqual([
      BadRequestError,
      AuthenticationError,
      NotFoundError,
      ConflictError,
      UnprocessableEntityError,
      RateLimitError,
      InternalServerError,
      InternalServerError,
      APIError,
    ]);
  });

  it.each([
    ['Mandate is not active or authorized', MandateNotActiveError],
    ['Mandate activation needs to be initiated first', ActivationNotInitiatedError],
    ['Insufficient funds', InsufficientFundsError],
    ['Refund already exists', DuplicateRefundError],
  ])('should recognise the spec 409 "%s" by its message alone', (message, type) => {
    const error = failed(409, { status: 'error', message });
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.name).toBe(type.name);
  });

  it('should recognise a known 409 by our stable code', () => {
    expect(failed(409, { message: 'Not enough money', code: 'insufficient_funds' })).toBeInstanceOf(
      InsufficientFundsError,
    );
  });

  it('should carry status, code, issues, headers, request id and raw body', () => {
    const body = {
      status: 'error',
      message: 'Invalid request',
      code: 'validation_failed',
      issues: [{ path: 'amount', message: 'must be positive' }],
      request_id: 'req-body',
    };
    const error = failed(400, body, { 'X-Request-Id': 'req-header' });
    expect(error).toBeInstanceOf(PaymentsError);
    expect(error).toBeInstanceOf(Error);
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.issues).toEqual([{ path: 'amount', message: 'must be positive' }]);
    expect(error.requestId).toBe('req-header');
    expect(error.rawBody).toBe(JSON.stringify(body));
    expect(error.headers?.get('x-request-id')).toBe('req-header');
    expect(error.message).toBe(
      'Request failed with status 400: POST https://api.example/disbursements/initialize (Invalid request)',
    );
  });

  it('should fall back to the body request id and survive a non-JSON body', () => {
    expect(failed(404, { request_id: 'req-1' }).requestId).toBe('req-1');
    const error = failed(502, '<html>Bad gateway</html>');
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.code).toBeUndefined();
    expect(error.rawBody).toBe('<html>Bad gateway</html>');
    expect(error.message).toBe(
      'Request failed with status 502: POST https://api.example/disbursements/initialize',
    );
  });
});
