/**
 * The load model's markdown tables (bench/scale.ts prints them; bench/README.md and
 * docs/architecture.md keep a run's output): the measured units, the ceilings at several
 * shard counts, the cost per million, and the target configuration. Dollar figures are
 * estimates rounded for display, not money the gateway handles.
 */
import { eventsPerPurgeStatement, type ModelResult } from './model.ts';
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
  const { attempt, purge, keyExpiry } = measured;
  const storage = attempt.outboxStorage;
  const keyStorage = measured.post.keyStorage;
  const notes = [
    `Webhook body: ${group(measured.ingest[1].bodyBytes ?? 0)} bytes.`,
    storage?.metered
      ? `Outbox storage per attempt (its own SQLite, billed like D1): ${two(storage.rowsRead)} rows read, ${two(storage.rowsWritten)} rows written.`
      : 'Outbox storage per attempt: not metered in this run.',
    keyStorage?.metered
      ? `Idempotency key objects per POST (their own SQLite, billed like D1): ${two(keyStorage.rowsWritten)} rows written to claim and store the answer, ${two(keyExpiry.keyStorage.rowsWritten)} to expire it (the alarm's own write apart: once per object and sweep), ${group(keyExpiry.bytesKept)} bytes kept.`
      : 'Idempotency key objects: not metered in this run.',
    `One cron run purged ${group(purge.eventsPurged)} old events of a larger backlog in one database, in ${purge.statements} D1 queries.`,
    `Purges per cron run over N shards (worker/cron-budget.ts planCronRun): the run visits up to every shard, each for as many event purge statements as its 1,000 D1 queries leave (10 each up to 42 shards, 3 at 90), ${group(eventsPerPurgeStatement(purge.eventsPurged))} events a statement.`,
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
    'Webhook events (with their deliveries and attempts) are spread over the N shards ' +
    "(`D1_SHARDS`): every column is today's code. Subscriptions stay in `DB`; an event stored " +
    'elsewhere reads copies of them (refreshed every `SUBSCRIPTION_CACHE_SEC`) and writes its ' +
    "subscriber's health there only when it changes. The event purge is shared by one cron run " +
    'over every shard. Idempotency keys are in their own objects, whatever N.';
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
  const { queue } = result;
  return [
    `Target: ${group(target.eventsPerDay)} events a day kept ${target.retentionDays} days, ${group(target.peakPostsPerSecond)} idempotent POSTs/s at peak (${group(target.averagePostsPerSecond)}/s on average), each rate limit used at most ${Math.round(target.headroom * 100)} %, each database filled at most ${Math.round(target.sizeHeadroom * 100)} %.`,
    `Cron: every ${result.cron.minutes} minutes (${result.cron.runsPerDay} runs a day). Shards needed: **${result.shards}** (${needs}).`,
    `Queue: ${two(queue.messagesPerSecond)} messages/s on average, ${two(queue.invocationsPerSecond)} consumer invocations/s at max_batch_size ${queue.maxBatchSize}, ${queue.maxConcurrency} concurrent at most with the headroom.`,
    'Not raised by shards:',
    ...beyond,
    `Monthly cost (usage, 30 days): events ${dollars(result.monthly.events)}, POSTs ${dollars(result.monthly.posts)}, total **${dollars(result.monthly.total)}**, plus the Workers Paid plan.`,
  ].join('\n');
}

/** The daily volumes of events the by-volume table prices (docs/deploy.md). */
export const VOLUMES = Object.freeze([10_000, 100_000, 1_000_000, 10_000_000] as const);

/**
 * What each daily volume of events needs and costs a month, events only (idempotent POSTs are
 * priced per million apart): the shards, the cron step, and the month's usage by item.
 *
 * @param results - the target solved at each volume, in the order of `volumes`.
 * @param volumes - events a day, one per result.
 */
export function volumeTable(results: readonly TargetResult[], volumes: readonly number[]): string {
  const items = Object.keys(results[0]?.monthlyByItem ?? {}).filter((item) => item !== 'total');
  const lines = results.map((result, index) =>
    row([
      group(volumes[index] ?? 0),
      String(result.shards),
      `*/${result.cron.minutes}`,
      ...items.map((item) => dollars(result.monthlyByItem[item] ?? 0)),
      dollars(result.monthly.total),
    ]),
  );
  return [
    row(['events a day', 'D1 databases', 'cron', ...items, 'a month']),
    rule(4 + items.length),
    ...lines,
  ].join('\n');
}

/**
 * The target's configuration as wrangler.toml lines (the generation of shards, the consumer,
 * the cron) and its monthly cost by item: what docs/deploy.md writes down.
 */
export function targetConfiguration(result: TargetResult): string {
  const names = [
    'DB',
    ...Array.from({ length: result.shards - 1 }, (_, index) => `DB_SHARD_${index + 1}`),
  ];
  const shown =
    names.length <= 4 ? names.join(',') : `${names.slice(0, 3).join(',')},...,${names.at(-1)}`;
  const lines = [
    `D1_SHARDS = "${shown}"   # ${result.shards} [[d1_databases]] bindings, one generation`,
    '[[queues.consumers]]  # edgepay-deliveries',
    `max_batch_size = ${result.queue.maxBatchSize}`,
    'max_batch_timeout = 1',
    `max_concurrency = ${result.queue.maxConcurrency}`,
    'max_retries = 7',
    `crons = ["*/${result.cron.minutes} * * * *"]`,
  ];
  const cost = [
    row(['item', 'a month']),
    rule(2),
    ...Object.entries(result.monthlyByItem).map(([item, value]) => row([item, dollars(value)])),
  ];
  return ['```toml', ...lines, '```', '', ...cost].join('\n');
}
