import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type SandboxServer, startSandboxServer } from '../../cli/sandbox-server.ts';
import { applyLocalMigrations, ROOT } from '../../scripts/gateway-dev.ts';
import { runScheduled } from '../../scripts/local-cron.ts';
import { type GatewayProcess, startGateway } from './crash/gateway-process.ts';
import {
  minor,
  sandboxState,
  sweptRequeued,
  upstreamPosts,
  webhooksSettled,
} from './crash/ledger.ts';
import { type CrashSubscriber, startCrashSubscriber } from './crash/subscriber.ts';
import {
  type Answer,
  type Attempt,
  CALLER_TOKEN,
  type FinalAnswer,
  type MoneyRequest,
  mapBounded,
  paymentRequest,
  sendOnce,
  sendUntilFinal,
  transferRequest,
} from './crash/traffic.ts';

// Crash test of the local stack: the gateway's `wrangler dev` (npm start's command, local D1
// persisted in a folder) is killed with SIGKILL, process group and all, in the middle of
// idempotent POSTs and webhook ingestion, then restarted on the same state. Every request
// is retried with its key, the sandbox resends every webhook not answered 2xx (its retry
// schedule), the cron is ticked as wrangler dev would not, and the books must balance:
// no reference sent upstream twice, every acknowledged event delivered, replays identical.
// Ports of its own (the other e2e files use 18787-18809).
const PORTS = { gateway: 18817, sandbox: 18818 };
const ADMIN_TOKEN = 'dev-admin-token';
const OPENING_BALANCE = 1_000_000;
/** Transfers before the kill, around it, and how many of those the sandbox holds 1.2 s. */
const PRE_TRANSFERS = 12;
const MID_TRANSFERS = 28;
const HELD_TRANSFERS = 8;
const HOLD_MS = 1200;
/** Payments: initialized before the kill, half paid before it, half around it. */
const PAYMENTS = 12;
/** Gaps between launches around the kill, and the kill's time after the first launch (ms). */
const LAUNCH_GAP_MS = 25;
const PAY_GAP_MS = 80;
const KILL_AT_MS = 450;
/** How long the gateway stays down before its restart begins (a supervisor's back-off), ms. */
const DOWN_MS = 4000;
/** The sandbox's webhook retries here: 1 s to 20 s apart, 52 s in all. */
const WEBHOOK_RETRIES_MS = [1000, 2000, 3000, 5000, 8000, 13000, 20000];
/** Past the sweeper's 10 minutes of grace and the relay's 5-minute second retry. */
const CRON_STEP_MS = 20 * 60 * 1000;
const CRON = '*/15 * * * *';
/** Short settings so a claim orphaned by the kill is recovered within seconds (lock 9 s). */
const GATEWAY_VARS = ['UPSTREAM_TIMEOUT_MS:2000', 'IDEMPOTENCY_LOCK_TIMEOUT_SEC:9'];

const run = Date.now().toString(36);
const state = mkdtempSync(join(tmpdir(), 'edgepay-crash-'));
let sandbox: SandboxServer | undefined;
let subscriber: CrashSubscriber | undefined;
let gateway: GatewayProcess | undefined;

afterAll(async () => {
  await Promise.all([gateway?.stop(), sandbox?.close(), subscriber?.close()]);
  rmSync(state, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const same = (a: Answer, b: Answer) => a.status === b.status && a.body === b.body;
/**
 * A 200 recovered from the record of an earlier 200 (the same reference; the balance checks
 * the money): what a key answers when the gateway died after sending its answer but before
 * storing it (the stored answer of a transfer is written after it is sent).
 */
const recoveredFrom = (before: Answer, after: Answer) => {
  const record = (answer: Answer) =>
    (JSON.parse(answer.body) as { data: { reference: unknown } }).data.reference;
  return (
    before.status === 200 &&
    after.status === 200 &&
    after.headers.get('idempotent-recovered') === 'true' &&
    record(before) === record(after)
  );
};

async function control(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${sandbox?.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
}

const startOurGateway = () =>
  startGateway({
    port: PORTS.gateway,
    sandboxUrl: `http://127.0.0.1:${PORTS.sandbox}`,
    persistTo: state,
    varsFile: join(ROOT, '.dev.vars.example'),
    vars: GATEWAY_VARS,
    timeoutMs: 60_000,
  });

describe('local stack', () => {
  describe('crash of the gateway', () => {
    it('should send no reference twice, lose no acknowledged event and replay the same bytes', async () => {
      const started = Date.now();
      const gatewayUrl = `http://127.0.0.1:${PORTS.gateway}`;
      sandbox = await startSandboxServer({
        port: PORTS.sandbox,
        webhookUrl: `${gatewayUrl}/webhooks`,
      });
      await control('/__sandbox/webhooks/retries', { delays_ms: WEBHOOK_RETRIES_MS });
      subscriber = await startCrashSubscriber();
      applyLocalMigrations(state);
      gateway = await startOurGateway();
      const subscribed = await fetch(`${gatewayUrl}/admin/subscriptions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: subscriber.url, description: 'crash test' }),
      });
      expect(subscribed.status).toBe(201);

      const transfers = Array.from({ length: PRE_TRANSFERS + MID_TRANSFERS }, (_, i) =>
        transferRequest(run, i),
      );
      const payments = Array.from({ length: PAYMENTS }, (_, i) => paymentRequest(run, i));
      const pre = transfers.slice(0, PRE_TRANSFERS);
      const mid = transfers.slice(PRE_TRANSFERS);
      /** Answers given before the kill, by key: what a replay must repeat byte for byte. */
      const answeredBeforeKill = new Map<string, Answer>();

      // 1. Before the kill: transfers and payments answered, half the payments paid.
      for (const request of [...pre, ...payments]) {
        const attempt = await sendOnce(gatewayUrl, request);
        if (!('answer' in attempt)) throw new Error(`${request.reference}: ${attempt.error}`);
        expect(attempt.answer.status, attempt.answer.body).toBe(200);
        answeredBeforeKill.set(request.reference, attempt.answer);
      }
      const pay = (request: MoneyRequest) =>
        control(`/__sandbox/payments/${request.reference}/complete`, { outcome: 'success' });
      for (const request of payments.slice(0, PAYMENTS / 2)) await pay(request);

      // 2. The kill, in the middle of transfers (some held upstream, some not yet sent) and
      // of the webhooks of payments paid around it.
      for (const request of mid.slice(0, HELD_TRANSFERS * 2).filter((_, i) => i % 2 === 0)) {
        await control('/__sandbox/faults/rules', {
          fault: 'delay',
          reference: request.reference,
          after_ms: HOLD_MS,
        });
      }
      const launchedAt = Date.now();
      let killedAt = Number.POSITIVE_INFINITY;
      const midAttempts = mid.map(async (request, i) => {
        await sleep(i * LAUNCH_GAP_MS);
        const sentBeforeKill = Date.now() < killedAt;
        return { request, sentBeforeKill, attempt: await sendOnce(gatewayUrl, request) };
      });
      const paid = payments.slice(PAYMENTS / 2).map(async (request, i) => {
        await sleep(i * PAY_GAP_MS);
        await pay(request);
      });
      await sleep(KILL_AT_MS - (Date.now() - launchedAt));
      killedAt = Date.now();
      await gateway.kill();
      const killed = Date.now();
      const midResults: { request: MoneyRequest; sentBeforeKill: boolean; attempt: Attempt }[] =
        await Promise.all(midAttempts);
      await Promise.all(paid);
      for (const { request, attempt } of midResults) {
        if ('answer' in attempt) answeredBeforeKill.set(request.reference, attempt.answer);
      }

      // 3. Restart on the same local state, after a pause in which the webhooks of the
      // payments paid and the transfers settled meanwhile find nobody listening.
      await sleep(DOWN_MS);
      gateway = await startOurGateway();
      const downtimeMs = Date.now() - killed;

      // 4. Every request again with its key until a final response, then once more.
      const all = [...transfers, ...payments];
      const finals: FinalAnswer[] = await mapBounded(all, 8, (request) =>
        sendUntilFinal(gatewayUrl, request, 40),
      );
      const replays = await mapBounded(all, 8, (request) => sendOnce(gatewayUrl, request));

      // 5. The subscriber comes back; the sandbox resends what was not acknowledged; the
      // cron runs (each tick 20 minutes later than the last) until every event is delivered.
      subscriber.setUp(true);
      const webhooks = await webhooksSettled(sandbox.url, all.length, 70_000);
      const acknowledged = webhooks.filter((webhook) => webhook.delivery === 'delivered');
      const missing = () => acknowledged.filter((w) => !subscriber?.accepted().has(w.event_id));
      const undeliveredBeforeCron = missing().length;
      let ticks = 0;
      for (; ticks < 6 && missing().length > 0; ticks++) {
        await runScheduled(gatewayUrl, CRON, Date.now() + (ticks + 1) * CRON_STEP_MS);
        for (let waited = 0; waited < 5000 && missing().length > 0; waited += 250) await sleep(250);
      }

      // 6. The books.
      const posts = await upstreamPosts(sandbox.url, all);
      const duplicated = [...posts].filter(([, count]) => count > 1);
      const neverSent = [...posts].filter(([, count]) => count === 0);
      const replaysEqual = all.filter((_, i) => {
        const replay = replays[i] as Attempt;
        return 'answer' in replay && same(replay.answer, (finals[i] as FinalAnswer).answer);
      });
      const beforeKillEqual = all.filter((request, i) => {
        const before = answeredBeforeKill.get(request.reference);
        return before !== undefined && same(before, (finals[i] as FinalAnswer).answer);
      });
      const beforeKillRecovered = all.filter((request, i) => {
        const before = answeredBeforeKill.get(request.reference);
        const after = (finals[i] as FinalAnswer).answer;
        return before !== undefined && !same(before, after) && recoveredFrom(before, after);
      });
      const fees = await mapBounded(transfers, 8, async (request) => {
        const response = await fetch(`${gatewayUrl}/disbursements/verify/${request.reference}`, {
          headers: { Authorization: `Bearer ${CALLER_TOKEN}` },
        });
        const { data } = (await response.json()) as { data: { amount: number; fee: number } };
        return minor(data.amount) + minor(data.fee);
      });
      const expectedBalance =
        minor(OPENING_BALANCE) +
        payments.reduce((sum, request) => sum + minor(JSON.parse(request.body).amount), 0) -
        fees.reduce((sum, debit) => sum + debit, 0);
      const { balance, counts } = await sandboxState(sandbox.url);
      const figures = {
        requests_sent: all.length,
        answered_before_kill: answeredBeforeKill.size,
        in_flight_at_kill: midResults.filter((r) => r.sentBeforeKill && 'error' in r.attempt)
          .length,
        sent_while_down: midResults.filter((r) => !r.sentBeforeKill && 'error' in r.attempt).length,
        held_upstream_at_kill: HELD_TRANSFERS,
        gateway_downtime_ms: downtimeMs,
        retries_answered_409_in_flight: finals.reduce((sum, f) => sum + f.inFlightAnswers, 0),
        recovered_answers: finals.filter((f) => f.answer.headers.get('idempotent-recovered'))
          .length,
        replays_equal: `${replaysEqual.length}/${all.length}`,
        replays_equal_to_answers_before_kill: `${beforeKillEqual.length}/${answeredBeforeKill.size}`,
        answers_before_kill_recovered_after_it: beforeKillRecovered.length,
        references_duplicated: duplicated.length,
        webhooks_emitted: webhooks.length,
        webhooks_resent_by_sandbox: webhooks.filter((w) => (w.attempts ?? 1) > 1).length,
        events_acknowledged: acknowledged.length,
        events_delivered: acknowledged.length - missing().length,
        events_undelivered_before_cron: undeliveredBeforeCron,
        cron_ticks: ticks,
        deliveries_requeued_by_sweeper: sweptRequeued(gateway.output()),
        seconds: Math.round((Date.now() - started) / 1000),
      };
      console.log(`crash test of the local stack:\n${JSON.stringify(figures, null, 2)}`);

      expect(duplicated).toEqual([]);
      expect(neverSent).toEqual([]);
      expect(counts.transfers).toBe(transfers.length);
      expect(counts.payments).toBe(payments.length);
      expect(minor(balance)).toBe(expectedBalance);
      expect(finals.map((f) => f.answer.status)).toEqual(all.map(() => 200));
      expect(replaysEqual.length).toBe(all.length);
      expect(beforeKillEqual.length + beforeKillRecovered.length).toBe(answeredBeforeKill.size);
      expect(figures.in_flight_at_kill).toBeGreaterThan(0);
      expect(webhooks.filter((w) => w.delivery !== 'delivered')).toEqual([]);
      expect(missing().map((w) => `${w.event_type} ${w.event_id}`)).toEqual([]);
    }, 180_000);
  });
});
