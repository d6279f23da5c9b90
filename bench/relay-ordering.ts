// Ordered against unordered delivery throughput, part of `npm run bench -- relay-isolation`:
// one subscription, ordered or not, gets ORDER_EVENTS events spread over ORDER_REFERENCES
// references, ingested back to back; throughput is the events over the time from the first
// ingest to the last arrival. Ordered delivery sends the events of one reference one after
// another (each waits until the one before it is settled), so it is what it costs.
import { admin, EVENT_TYPE, ingest, type Subscriber, untilArrived } from './relay-subscribers.ts';

const bounded = (name: string, fallback: number, max: number) =>
  Math.min(Math.max(Math.floor(Number(process.env[name] ?? fallback)) || fallback, 1), max);
const EVENTS = bounded('ORDER_EVENTS', 60, 1000);
const REFERENCES = bounded('ORDER_REFERENCES', 6, 1000);
const DEADLINE_MS = 300_000;

/** One run's figures. */
export interface OrderingResult {
  readonly eventsPerSec: number;
  readonly arrived: number;
  /** Pairs of one reference's events that arrived in the opposite order they were sent. */
  readonly outOfOrder: number;
}

/** Runs one subscription, `ordered` as given, and deletes it after. */
export async function measureOrdering(
  gateway: string,
  subscriber: Subscriber,
  ordered: boolean,
): Promise<OrderingResult> {
  const created = await admin(gateway, 'POST', '/admin/subscriptions', {
    url: subscriber.url,
    event_types: [EVENT_TYPE],
    ordered,
    description: `bench/relay-ordering.ts ordered=${ordered}`,
  });
  const tag = ordered ? 'ordered' : 'unordered';
  const sent: { id: string; reference: string }[] = [];
  const started = Date.now();
  for (let i = 0; i < EVENTS; i++) {
    const id = `evt_order_${process.pid}_${tag}_${i}`;
    const reference = `ref_${process.pid}_${tag}_${i % REFERENCES}`;
    await ingest(gateway, id, reference);
    sent.push({ id, reference });
  }
  await untilArrived(
    subscriber,
    sent.map((event) => event.id),
    DEADLINE_MS,
  );
  await admin(gateway, 'DELETE', `/admin/subscriptions/${created.data?.id ?? ''}`);
  const arrivals = sent.flatMap((event) => {
    const at = subscriber.arrivals.get(event.id);
    return at === undefined ? [] : [{ ...event, at }];
  });
  const last = Math.max(...arrivals.map((event) => event.at));
  let outOfOrder = 0;
  for (const [index, event] of arrivals.entries()) {
    const later = arrivals.slice(index + 1).filter((next) => next.reference === event.reference);
    outOfOrder += later.filter((next) => next.at < event.at).length;
  }
  return {
    eventsPerSec: (1000 * arrivals.length) / Math.max(1, last - started),
    arrived: arrivals.length,
    outOfOrder,
  };
}

/** The run's shape, for the report. */
export const orderingPlan = () =>
  `${EVENTS} events over ${REFERENCES} references, ingested back to back`;
