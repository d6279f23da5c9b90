// Runs scheduled work whose time has come in sandbox time, in due order: processing items
// settle `settleAfterSec` after creation, unpaid checkouts expire.
import type { SandboxCore } from './core.ts';
import { settleDebit } from './debits.ts';
import { expirePayment } from './payments.ts';
import { settleRefund } from './refunds.ts';
import type { Job } from './state.ts';
import { reverseTransfer, settleTransfer } from './transfers.ts';

/**
 * Settles every job due at or before the sandbox clock's now, oldest first, including
 * jobs scheduled by the ones it runs (a transfer's reversal after its success). Each
 * record's times are those its job was due at, not the moment the sandbox noticed.
 * Synchronous, so no request interleaves with it.
 *
 * @param core - the sandbox.
 * @returns how many jobs ran.
 */
export function settleDue(core: SandboxCore): number {
  const now = core.now();
  let ran = 0;
  for (
    let job = core.state.jobs[0];
    job !== undefined && job.dueAt <= now;
    job = core.state.jobs[0]
  ) {
    core.state.jobs.shift();
    run(core, job);
    ran += 1;
  }
  return ran;
}

const RUNNERS: Record<Job['kind'], (core: SandboxCore, key: string, at: number) => void> = {
  'payment.expire': expirePayment,
  'transfer.settle': settleTransfer,
  'transfer.reverse': reverseTransfer,
  'refund.settle': settleRefund,
  'debit.settle': settleDebit,
};

function run(core: SandboxCore, job: Job): void {
  RUNNERS[job.kind](core, job.key, job.dueAt);
}
