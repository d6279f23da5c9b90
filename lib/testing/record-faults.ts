// Record faults: a record that reads as absent for a while (`visible_after`), settles on a
// real-time timer (`final_after`), or whose webhook goes out while its reads still show the
// previous state (`webhook_early`). A provider's reads lag behind its writes; these let a
// test open that window on purpose.
import type { SandboxCore } from './core.ts';
import type { FaultRule } from './fault-rules.ts';
import { RECORD_KINDS, type RecordKind, recordKey, recordsOf } from './record-kinds.ts';
import type { JobKind } from './state.ts';

/** Record faults attached to one record and not yet used up. */
export interface AttachedFaults {
  /** Real ms from creation to the final state (`final_after`). */
  finalAfterMs?: number;
  /** Real ms the reads lag behind the next change (`webhook_early`). */
  webhookEarlyMs?: number;
}

/** The settlement job of each kind that settles by itself. */
const SETTLE_JOBS: Partial<Record<RecordKind, JobKind>> = {
  transfer: 'transfer.settle',
  refund: 'refund.settle',
  debit: 'debit.settle',
};

/** The kinds whose change of state sends a webhook `webhook_early` can overtake. */
const CHANGING_KINDS: ReadonlySet<RecordKind> = new Set([
  'payment',
  'transfer',
  'refund',
  'debit',
  'mandate',
]);

/**
 * Called by every creation right after the record is stored: attaches the record rules
 * whose reference is the record's and whose route (if any) is the creating request's.
 *
 * @param core - the sandbox; `core.currentRoute` is the route being processed.
 * @param kind - the record's kind.
 * @param reference - its merchant reference (or generated one).
 */
export function recordCreated(core: SandboxCore, kind: RecordKind, reference: string): void {
  for (const rule of core.state.faultRules) {
    if (rule.reference !== undefined && rule.reference !== reference) continue;
    if (rule.route !== undefined && rule.route !== core.currentRoute) continue;
    attach(core, rule, kind, reference);
  }
}

/**
 * Attaches a new record rule naming a reference (and no route) to the records already
 * stored under it: hides them, moves their settlement onto the timer, or arms their next
 * webhook.
 */
export function attachToExisting(core: SandboxCore, rule: FaultRule): void {
  if (rule.reference === undefined || rule.route !== undefined) return;
  for (const kind of RECORD_KINDS) {
    const record = recordsOf(core.state, kind).get(rule.reference);
    if (record === undefined) continue;
    const settleJob = SETTLE_JOBS[kind];
    if (rule.fault === 'final_after') {
      // Only a record still waiting for its settlement job can be held.
      const jobs = core.state.jobs;
      const index = jobs.findIndex((job) => job.kind === settleJob && job.key === rule.reference);
      if (index === -1 || settleJob === undefined) continue;
      jobs.splice(index, 1);
      attach(core, rule, kind, rule.reference);
      core.schedule(core.now(), settleJob, rule.reference);
    } else {
      attach(core, rule, kind, rule.reference);
    }
  }
}

function attach(core: SandboxCore, rule: FaultRule, kind: RecordKind, reference: string): void {
  const ms = rule.afterMs ?? 0;
  const key = recordKey(kind, reference);
  const attached = core.state.recordFaults.get(key) ?? {};
  if (rule.fault === 'visible_after') {
    hide(core, key, ms);
  } else if (rule.fault === 'final_after' && SETTLE_JOBS[kind] !== undefined) {
    attached.finalAfterMs = ms;
  } else if (rule.fault === 'webhook_early' && CHANGING_KINDS.has(kind)) {
    attached.webhookEarlyMs = ms;
  } else {
    return;
  }
  rule.fired += 1;
  core.state.recordFaults.set(key, attached);
}

function hide(core: SandboxCore, key: string, ms: number): void {
  const { state } = core;
  state.hidden.set(key, (state.hidden.get(key) ?? 0) + 1);
  core.timers.after(ms, 'state', () => {
    const count = (state.hidden.get(key) ?? 1) - 1;
    if (count > 0) state.hidden.set(key, count);
    else state.hidden.delete(key);
  });
}

/**
 * Takes the `final_after` delay of a settlement job's record, if it has one: the job is
 * then run by a real-time timer instead of the sandbox clock.
 *
 * @returns real milliseconds, or `undefined` to schedule the job as usual.
 */
export function takeFinalAfter(
  core: SandboxCore,
  job: JobKind,
  reference: string,
): number | undefined {
  const kind = (Object.keys(SETTLE_JOBS) as RecordKind[]).find((k) => SETTLE_JOBS[k] === job);
  if (kind === undefined) return undefined;
  const attached = core.state.recordFaults.get(recordKey(kind, reference));
  const ms = attached?.finalAfterMs;
  if (attached !== undefined) delete attached.finalAfterMs;
  return ms;
}

/**
 * Called right before a record reaches a new state (and its webhook is emitted): when it
 * carries `webhook_early`, its reads keep showing a copy of it as it is now for that
 * many real milliseconds.
 */
export function beforeChange(
  core: SandboxCore,
  kind: RecordKind,
  reference: string,
  record: object,
): void {
  const key = recordKey(kind, reference);
  const attached = core.state.recordFaults.get(key);
  const ms = attached?.webhookEarlyMs;
  if (attached === undefined || ms === undefined) return;
  delete attached.webhookEarlyMs;
  const { state } = core;
  const snapshot = { ...record };
  state.staleViews.set(key, snapshot);
  core.timers.after(ms, 'state', () => {
    if (state.staleViews.get(key) === snapshot) state.staleViews.delete(key);
  });
}

/**
 * The record as reads see it: `undefined` while `visible_after` hides it, the copy
 * `webhook_early` keeps while the reads lag, else the record itself.
 *
 * @param core - the sandbox.
 * @param kind - the record's kind.
 * @param reference - its merchant reference.
 * @param record - the stored record, if any.
 */
export function shown<T extends object>(
  core: SandboxCore,
  kind: RecordKind,
  reference: string,
  record: T | undefined,
): T | undefined {
  if (record === undefined) return undefined;
  const key = recordKey(kind, reference);
  if (core.state.hidden.has(key)) return undefined;
  return (core.state.staleViews.get(key) as T | undefined) ?? record;
}

/** {@link shown} over a list: hidden records left out, lagging ones as reads see them. */
export function shownAll<T extends object>(
  core: SandboxCore,
  kind: RecordKind,
  records: Iterable<T>,
  referenceOf: (record: T) => string,
): T[] {
  const out: T[] = [];
  for (const record of records) {
    const view = shown(core, kind, referenceOf(record), record);
    if (view !== undefined) out.push(view);
  }
  return out;
}
