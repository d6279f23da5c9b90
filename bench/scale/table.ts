/**
 * The load model's markdown tables (bench/scale.ts prints them; bench/README.md and
 * docs/architecture.md keep a run's output): the measured units, the ceilings at several
 * shard counts, the cost per million, and the target configuration. Dollar figures are
 * estimates rounded for display, not money the gateway handles.
 */
import type { ModelResult } from './model.ts';
import type { Target, TargetResult } from './target.ts';
import type { Measured, UnitMeasure } from './units.ts';

const group = (n: number) => Math.round(n).toLocaleString('en-US');
const two = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const dollars = (n: number) => `$${n.toFixed(2)}`;
const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
const rule = (columns: number) => row(Array.from({ length: columns }, () => '---'));

/** The measured units, one row each. */
export function unitsTable(measured: Measured): string {
  const units: [string, UnitMeasure][] = [
    ['ingest, 0 subscriptions', measured.ingest[0]],
    ['ingest, 1 subscription', measured.ingest[1]],
    ['ingest, 3 subscriptions', measured.ingest[3]],
    ['delivery attempt (consumer + outbox)', measured.attempt],
    ['idempotent POST', measured.post],
    ['idempotent POST, replayed', measured.postReplay],
  ];
  const objects = (unit: UnitMeasure) =>
    Object.entries(unit.objectRequests)
      .map(([name, n]) => `${two(n)} ${name}`)
      .join(', ') || '0';
  const lines = [
    row([
      'unit (samples)',
      'D1 queries',
      'D1 round trips (before the answer)',
      'rows read',
      'rows written',
      'D1 bytes stored',
      'queue messages',
      'Durable Object requests',
      'fetch subrequests',
    ]),
    rule(9),
    ...units.map(([name, unit]) =>
      row([
        `${name} (${unit.samples})`,
        two(unit.statements),
        unit.roundTripsBeforeAnswer === undefined
          ? two(unit.roundTrips)
          : `${two(unit.roundTrips)} (${two(unit.roundTripsBeforeAnswer)})`,
        two(unit.rowsRead),
        two(unit.rowsWritten),
        group(unit.bytesStored),
        two(unit.queueMessages),
        objects(unit) + (unit.pendingAlarms ? ` + ${two(unit.pendingAlarms)} alarm` : ''),
        two(unit.fetches),
      ]),
    ),
  ];
  const { attempt, purge } = measured;
  const storage = attempt.outboxStorage;
  const notes = [
    `Webhook body: ${group(measured.ingest[1].bodyBytes ?? 0)} bytes.`,
    storage?.metered
      ? `Outbox storage per attempt (its own SQLite, billed like D1): ${two(storage.rowsRead)} rows read, ${two(storage.rowsWritten)} rows written.`
      : 'Outbox storage per attempt: not metered in this run.',
    `One cron run purged ${group(purge.eventsPurged)} old events and ${group(purge.keysPurged)} expired keys of a larger backlog in one database, in ${purge.statements} D1 queries.`,
    `Key purge per cron run (worker/cron.ts): ${group(purge.keyPurge.batchSize)} keys per statement, min(${purge.keyPurge.statementsPerShard}, max(1, floor(${purge.keyPurge.statementsPerRun} / N))) statements per shard of N.`,
  ];
  return [...lines, '', ...notes].join('\n');
}

/** The ceilings at each model's shard count: events a day, then POSTs a second. */
export function ceilingsTable(models: readonly ModelResult[]): string {
  const [first] = models;
  if (first === undefined) return '';
  const shards = models.map((model) => model.options.shards);
  const header = row([
    'ceiling',
    'limit',
    'use',
    ...shards.map((n) => `events/day, N = ${n}`),
    ...shards.map((n) => `POSTs/s, N = ${n}`),
  ]);
  const value = (n: number | null) => (n === null ? '-' : group(n));
  const lines = first.ceilings.map((ceiling, index) =>
    row([
      ceiling.perShard ? `${ceiling.name} (per shard)` : ceiling.name,
      ceiling.limit,
      ceiling.use,
      ...models.map((model) => value(model.ceilings[index]?.eventsPerDay ?? null)),
      ...models.map((model) => value(model.ceilings[index]?.postsPerSecond ?? null)),
    ]),
  );
  const note =
    'Idempotency keys are spread over the N shards (`D1_SHARDS`): the POSTs/s columns hold for ' +
    "today's code. Webhook events, deliveries and attempts are not yet: they stay in `DB`, so " +
    "today's code holds the N = 1 events/day column at any N, and the events/day columns for " +
    'N > 1 are what the design reaches once they are spread.';
  return [header, rule(3 + 2 * models.length), ...lines, '', note].join('\n');
}

/** The cost per million events (with their deliveries) and per million POSTs, by item. */
export function costTable(model: ModelResult): string {
  const { events, posts } = model.costPerMillion;
  const items = Object.keys(events);
  return [
    row(['item', 'per million events', 'per million idempotent POSTs']),
    rule(3),
    ...items.map((item) => row([item, dollars(events[item] ?? 0), dollars(posts[item] ?? 0)])),
  ].join('\n');
}

/** The target configuration and its monthly cost. */
export function targetText(result: TargetResult, target: Target): string {
  const needs = Object.entries(result.needs)
    .map(([name, n]) => `${name}: ${n}`)
    .join('; ');
  const beyond = result.beyond.map(
    (item) =>
      `- ${item.name}: ${Math.round(item.use * 100)} % of the limit${item.use > target.headroom ? ` (over the ${Math.round(target.headroom * 100)} % headroom: ${item.remedy})` : ''}`,
  );
  return [
    `Target: ${group(target.eventsPerDay)} events a day kept ${target.retentionDays} days, ${group(target.peakPostsPerSecond)} idempotent POSTs/s at peak (${group(target.averagePostsPerSecond)}/s on average), each rate limit used at most ${Math.round(target.headroom * 100)} %, each database filled at most ${Math.round(target.sizeHeadroom * 100)} %.`,
    `Shards needed: **${result.shards}** (${needs}). Events are not spread over shards yet: their needs are the design's, and today's code holds the N = 1 event ceilings.`,
    `Queue: ${two((target.eventsPerDay / 86_400) * result.model.event.queueMessages)} messages/s on average, ${two(((target.eventsPerDay / 86_400) * result.model.event.queueMessages) / result.model.options.consumerBatchSize)} consumer invocations/s at max_batch_size ${result.model.options.consumerBatchSize}, each ending once its outboxes hold the messages.`,
    'Not raised by shards:',
    ...beyond,
    `Monthly cost (usage, 30 days): events ${dollars(result.monthly.events)}, POSTs ${dollars(result.monthly.posts)}, total **${dollars(result.monthly.total)}**, plus the Workers Paid plan.`,
  ].join('\n');
}
