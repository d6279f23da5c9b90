// Timing fault rules (`POST /__sandbox/faults/rules`): what a rule is, how it is validated,
// listed and matched against a request. What each fault does is in request-faults.ts and
// record-faults.ts.
import * as v from 'valibot';
import { listEndpoints } from '../endpoints.ts';
import type { SandboxCore } from './core.ts';
import { invalidField } from './http-error.ts';
import { attachToExisting } from './record-faults.ts';
import { type RecordKind, recordCreationRoutes } from './record-kinds.ts';
import { readControlBody, type SandboxRequestContext } from './request.ts';
import { json } from './respond.ts';

/** Faults that act on a matching API request, `times` times. */
const REQUEST_FAULTS = ['error', 'error_then_commit', 'drop_then_commit', 'delay'] as const;
/** Faults that attach to a record (once per record). */
const RECORD_FAULTS = ['visible_after', 'final_after', 'webhook_early'] as const;

/** Every fault a rule can play. */
type FaultKind = (typeof REQUEST_FAULTS)[number] | (typeof RECORD_FAULTS)[number];

/** Longest `after_ms`: ten minutes. */
const MAX_AFTER_MS = 600_000;
/** Most requests one request rule acts on. */
const MAX_TIMES = 1_000;
/** Status of `error` and `error_then_commit` when the rule names none. */
const DEFAULT_FAULT_STATUS = 503;

/** One rule, as stored; its JSON view is {@link ruleView}. */
export interface FaultRule {
  id: string;
  fault: FaultKind;
  /** The merchant reference it is limited to. */
  reference: string | undefined;
  /** `METHOD /path/:param` it is limited to, as in the endpoint table. */
  route: string | undefined;
  /** Answered status (`error`, `error_then_commit`). */
  status: number | undefined;
  /** Real milliseconds (all but `error`). */
  afterMs: number | undefined;
  /** Requests it acts on (request faults). */
  times: number | undefined;
  /** Requests it acted on, or records it attached to. */
  fired: number;
}

const API_ROUTES: ReadonlySet<string> = new Set(
  listEndpoints().map((endpoint) => `${endpoint.method} ${endpoint.path}`),
);

/** The routes a record fault may name: those creating a record the fault can act on. */
const RECORD_FAULT_KINDS: Record<(typeof RECORD_FAULTS)[number], readonly RecordKind[]> = {
  visible_after: ['payment', 'transfer', 'refund', 'debit', 'mandate', 'virtual_account'],
  // Only these settle by themselves; a payment ends when its customer pays.
  final_after: ['transfer', 'refund', 'debit'],
  webhook_early: ['payment', 'transfer', 'refund', 'debit', 'mandate'],
};

const integer = (min: number, max: number) =>
  v.pipe(
    v.number('Expected an integer'),
    v.integer('Expected an integer'),
    v.minValue(min, `Expected at least ${min}`),
    v.maxValue(max, `Expected at most ${max}`),
  );

/** Body of `POST /__sandbox/faults/rules` (unknown fields refused, so a typo is not ignored). */
const FaultRuleSchema = v.strictObject({
  fault: v.picklist(
    [...REQUEST_FAULTS, ...RECORD_FAULTS],
    `Expected one of ${[...REQUEST_FAULTS, ...RECORD_FAULTS].join(', ')}`,
  ),
  reference: v.optional(
    v.pipe(
      v.string('Expected a string'),
      v.minLength(1, 'Expected a reference'),
      v.maxLength(255, 'Expected at most 255 characters'),
    ),
  ),
  route: v.optional(v.string('Expected "METHOD /path" as in docs/endpoints.md')),
  status: v.optional(integer(500, 599)),
  after_ms: v.optional(integer(0, MAX_AFTER_MS)),
  times: v.optional(integer(1, MAX_TIMES)),
});

/**
 * Checks what the schema cannot see: a target, which fields the fault takes, a known route.
 *
 * @throws {SandboxHttpError} 400 `validation_failed` naming the field.
 */
function toRule(id: string, body: v.InferOutput<typeof FaultRuleSchema>): FaultRule {
  const { fault } = body;
  const isRequestFault = (REQUEST_FAULTS as readonly string[]).includes(fault);
  if (body.reference === undefined && body.route === undefined) {
    throw invalidField('reference', 'Expected a reference, a route or both');
  }
  if (body.route !== undefined) {
    if (!API_ROUTES.has(body.route)) {
      throw invalidField('route', 'Expected "METHOD /path" of an endpoint in docs/endpoints.md');
    }
    if (!isRequestFault) {
      const kinds = RECORD_FAULT_KINDS[fault as (typeof RECORD_FAULTS)[number]];
      const routes = recordCreationRoutes(kinds);
      if (!routes.includes(body.route)) {
        throw invalidField('route', `Expected a route creating the record: ${routes.join(', ')}`);
      }
    }
  }
  const takesStatus = fault === 'error' || fault === 'error_then_commit';
  if (body.status !== undefined && !takesStatus) {
    throw invalidField('status', 'Only error and error_then_commit answer a status');
  }
  if (fault === 'error' && body.after_ms !== undefined) {
    throw invalidField('after_ms', 'error answers at once and never commits');
  }
  if (fault !== 'error' && body.after_ms === undefined) {
    throw invalidField('after_ms', `${fault} needs after_ms (real milliseconds)`);
  }
  if (body.times !== undefined && !isRequestFault) {
    throw invalidField('times', 'Record faults act once per record');
  }
  return {
    id,
    fault,
    reference: body.reference,
    route: body.route,
    status: takesStatus ? (body.status ?? DEFAULT_FAULT_STATUS) : undefined,
    afterMs: body.after_ms,
    times: isRequestFault ? (body.times ?? 1) : undefined,
    fired: 0,
  };
}

/** Whether the rule acts on requests (`times` of them) rather than on records. */
function isRequestRule(rule: FaultRule): boolean {
  return (REQUEST_FAULTS as readonly string[]).includes(rule.fault);
}

/** The JSON view of a rule: the fields it was given (with defaults) and `fired`. */
function ruleView(rule: FaultRule): Record<string, unknown> {
  return {
    id: rule.id,
    fault: rule.fault,
    ...(rule.reference === undefined ? {} : { reference: rule.reference }),
    ...(rule.route === undefined ? {} : { route: rule.route }),
    ...(rule.status === undefined ? {} : { status: rule.status }),
    ...(rule.afterMs === undefined ? {} : { after_ms: rule.afterMs }),
    ...(rule.times === undefined ? {} : { times: rule.times }),
    fired: rule.fired,
  };
}

/**
 * `POST /__sandbox/faults/rules`: adds one rule (rules accumulate until `POST
 * /__sandbox/faults` `{}` or a reset) and answers `{ status, message, data: rule }`. A
 * record fault naming a reference also attaches to the records that already have it.
 *
 * @throws 400 `validation_failed` naming the field.
 */
export function addFaultRuleControl(ctx: SandboxRequestContext): Response {
  const { core } = ctx;
  const rule = toRule(core.nextId('rule'), readControlBody(ctx, FaultRuleSchema));
  core.state.faultRules.push(rule);
  if (!isRequestRule(rule)) attachToExisting(core, rule);
  return json({ status: 'success', message: 'Fault rule added', data: ruleView(rule) });
}

/** `GET /__sandbox/faults/rules`: `{ status, data: rule[] }` in the order they were added. */
export function listFaultRulesControl(ctx: SandboxRequestContext): Response {
  return json({ status: 'success', data: ctx.core.state.faultRules.map(ruleView) });
}

/**
 * The merchant references a request names: its JSON body's `reference`,
 * `refund_reference`, `payment_reference` and `account_reference`, its path parameters,
 * and its `reference` and `payment_reference` query parameters.
 */
export function namedReferences(
  ctx: Pick<SandboxRequestContext, 'params' | 'url' | 'rawBody'>,
): Set<string> {
  const names = new Set<string>(Object.values(ctx.params));
  for (const name of ['reference', 'payment_reference']) {
    const value = ctx.url.searchParams.get(name);
    if (value !== null) names.add(value);
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(ctx.rawBody));
  } catch {
    return names;
  }
  if (typeof body === 'object' && body !== null) {
    for (const field of [
      'reference',
      'refund_reference',
      'payment_reference',
      'account_reference',
    ]) {
      const value = (body as Record<string, unknown>)[field];
      if (typeof value === 'string') names.add(value);
    }
  }
  return names;
}

/**
 * The first request rule (in the order added) that still has requests to act on and
 * matches this route and the references the request names. Does not count it.
 *
 * @param core - the sandbox.
 * @param route - `METHOD /path/:param` of the request.
 * @param names - {@link namedReferences} of the request.
 */
export function findRequestRule(
  core: SandboxCore,
  route: string,
  names: ReadonlySet<string>,
): FaultRule | undefined {
  return core.state.faultRules.find(
    (rule) =>
      isRequestRule(rule) &&
      rule.fired < (rule.times ?? 1) &&
      (rule.route === undefined || rule.route === route) &&
      (rule.reference === undefined || names.has(rule.reference)),
  );
}
