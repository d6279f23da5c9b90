// Direct debit mandates (docs/payments-api.md, "Endpoints > Direct debit", "States > Mandate").
import { toMajorUnits, toMinorUnits } from '../money.ts';
import {
  CreateMandateRequestSchema,
  ValidateActivationRequestSchema,
} from '../schemas/direct-debits.ts';
import type { SandboxCore } from './core.ts';
import { invalidField, notFoundError, SandboxHttpError } from './http-error.ts';
import { beforeChange, recordCreated, shown } from './record-faults.ts';
import { param, readJsonBody, type SandboxRequestContext } from './request.ts';
import { iso, json } from './respond.ts';
import type { MandateRecord } from './state.ts';

/** The activation answers the sandbox accepts; any other is refused (docs/sandbox.md). */
const ACTIVATION_ANSWERS = { otp: '123456', pin: '1234' } as const;

/**
 * `POST /direct-debits/mandates`: creates a `pending` mandate. start_date must be after
 * today (sandbox time, UTC); end_date at least 30 days after start_date (schema).
 *
 * @throws 400 `validation_failed` naming the field.
 */
export function createMandate(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, CreateMandateRequestSchema);
  if (body.start_date <= core.today()) {
    throw invalidField('start_date', `Expected a future date (today is ${core.today()})`);
  }
  const now = core.now();
  const mandate: MandateRecord = {
    mandateReference: core.nextId('mnd'),
    status: 'pending',
    customerName: body.customer_name,
    customerEmail: body.customer_email,
    accountNumber: body.account_number,
    bankCode: body.bank_code,
    startDate: body.start_date,
    endDate: body.end_date,
    monthlyAmountMinor: toMinorUnits(body.monthly_amount),
    monthlyDebitCount: body.monthly_debit_count,
    activationInitiated: false,
    createdAt: now,
    updatedAt: now,
  };
  core.state.mandates.set(mandate.mandateReference, mandate);
  recordCreated(core, 'mandate', mandate.mandateReference);
  const { updated_at: _, ...view } = mandateView(mandate);
  return json({ status: 'success', message: 'Mandate created', data: view });
}

/**
 * `POST /direct-debits/mandates/{ref}/initiate-activation`: starts the bank's two-step
 * authorization (status stays `pending`; may be repeated) and answers the challenge
 * `{ mandate_reference, param1: 'otp', value1, param2: 'pin', value2 }`.
 *
 * @throws 404 `not_found`; 409 `mandate_already_active`; 409 `mandate_cancelled`.
 */
export function initiateActivation(ctx: SandboxRequestContext): Response {
  const mandate = pendingMandate(ctx.core, param(ctx, 'mandate_reference'));
  mandate.activationInitiated = true;
  return json({
    status: 'success',
    message: 'Mandate activation initiated',
    data: {
      mandate_reference: mandate.mandateReference,
      param1: 'otp',
      value1: 'Enter the one-time password sent to the customer (sandbox: 123456)',
      param2: 'pin',
      value2: 'Enter the customer account PIN (sandbox: 1234)',
    },
  });
}

/**
 * `POST /direct-debits/mandates/{ref}/validate-activation`: checks the OTP and PIN
 * (named `otp` and `pin` in either order) and activates the mandate, emitting
 * `mandate_activated`.
 *
 * @throws 400 `validation_failed` (mandate_reference differs from the path, unknown
 *   param names); 404 `not_found`; 409 `mandate_already_active`; 409 `mandate_cancelled`;
 *   409 `activation_not_initiated`; 422 `invalid_activation_credentials`.
 */
export function validateActivation(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const body = readJsonBody(ctx, ValidateActivationRequestSchema);
  const reference = param(ctx, 'mandate_reference');
  if (body.mandate_reference !== reference) {
    throw invalidField('mandate_reference', 'Must equal the mandate reference in the path');
  }
  const mandate = pendingMandate(core, reference);
  if (!mandate.activationInitiated) {
    throw new SandboxHttpError(
      409,
      'activation_not_initiated',
      'Mandate activation needs to be initiated first',
    );
  }
  const answers = new Map([
    [body.param1, body.value1],
    [body.param2, body.value2],
  ]);
  if (!answers.has('otp') || !answers.has('pin')) {
    const path = answers.has('otp') ? 'param2' : 'param1';
    throw invalidField(path, 'Expected the parameters otp and pin from initiate-activation');
  }
  if (
    answers.get('otp') !== ACTIVATION_ANSWERS.otp ||
    answers.get('pin') !== ACTIVATION_ANSWERS.pin
  ) {
    throw new SandboxHttpError(
      422,
      'invalid_activation_credentials',
      'The OTP or PIN is incorrect',
    );
  }
  const now = core.now();
  beforeChange(core, 'mandate', mandate.mandateReference, mandate);
  mandate.status = 'active';
  mandate.updatedAt = now;
  core.emit({
    type: 'mandate_activated',
    status: 'success',
    message: 'Mandate activated',
    at: now,
    data: {
      mandate_reference: mandate.mandateReference,
      status: mandate.status,
      customer_email: mandate.customerEmail,
      start_date: mandate.startDate,
      end_date: mandate.endDate,
    },
  });
  return json({
    status: 'success',
    message: 'Mandate activated',
    data: { mandate_reference: mandate.mandateReference, status: mandate.status },
  });
}

/**
 * `GET /direct-debits/mandates/{ref}`: `{ status, data: Mandate }` with updated_at.
 *
 * @throws 404 `not_found`.
 */
export function retrieveMandate(ctx: SandboxRequestContext): Response {
  const reference = param(ctx, 'mandate_reference');
  const mandate = shown(ctx.core, 'mandate', reference, ctx.core.state.mandates.get(reference));
  if (mandate === undefined) throw notFoundError('Mandate not found');
  return json({ status: 'success', data: mandateView(mandate) });
}

/**
 * `PATCH /direct-debits/mandates/{ref}/cancel`: pending or active -> cancelled.
 * Cancelling a cancelled mandate answers the same success again and changes nothing.
 *
 * @throws 404 `not_found`.
 */
export function cancelMandate(ctx: SandboxRequestContext): Response {
  const mandate = findMandate(ctx.core, param(ctx, 'mandate_reference'));
  if (mandate.status !== 'cancelled') {
    mandate.status = 'cancelled';
    mandate.updatedAt = ctx.core.now();
  }
  return json({
    status: 'success',
    message: 'Mandate cancelled',
    data: { mandate_reference: mandate.mandateReference, status: mandate.status },
  });
}

/**
 * Looks a mandate up.
 *
 * @throws {SandboxHttpError} 404 `not_found` "Mandate not found".
 */
export function findMandate(core: SandboxCore, reference: string): MandateRecord {
  const mandate = core.state.mandates.get(reference);
  if (mandate === undefined) throw notFoundError('Mandate not found');
  return mandate;
}

function pendingMandate(core: SandboxCore, reference: string): MandateRecord {
  const mandate = findMandate(core, reference);
  if (mandate.status === 'active') {
    throw new SandboxHttpError(409, 'mandate_already_active', 'Mandate is already active');
  }
  if (mandate.status === 'cancelled') {
    throw new SandboxHttpError(409, 'mandate_cancelled', 'Mandate is cancelled');
  }
  return mandate;
}

function mandateView(mandate: MandateRecord): Record<string, unknown> {
  return {
    mandate_reference: mandate.mandateReference,
    status: mandate.status,
    customer_name: mandate.customerName,
    customer_email: mandate.customerEmail,
    account_number: mandate.accountNumber,
    bank_code: mandate.bankCode,
    start_date: mandate.startDate,
    end_date: mandate.endDate,
    monthly_amount: toMajorUnits(mandate.monthlyAmountMinor),
    monthly_debit_count: mandate.monthlyDebitCount,
    created_at: iso(mandate.createdAt),
    updated_at: iso(mandate.updatedAt),
  };
}
