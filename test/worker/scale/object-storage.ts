/**
 * The load model's meter of a Durable Object's own storage (a subscription outbox's, an
 * idempotency key object's: its SQLite rows, key-value entries and alarm), billed like D1 rows: SQL rows read and written as the cursors report
 * them, each key-value get one row read, each put or delete and each `setAlarm` one row
 * written (the Durable Objects pricing page's footnotes; it names no charge for `deleteAlarm`).
 */
import { runInDurableObject } from 'cloudflare:test';

/** Counts over every outbox metered so far. */
export interface StorageMeter {
  /** Every SQL cursor the metered outboxes opened. */
  readonly cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[];
  kvReads: number;
  kvWrites: number;
  alarmWrites: number;
  /** 1 when the object has an alarm set now (one more request when it fires), else 0. */
  alarmSet(stub: DurableObjectStub): Promise<number>;
  /** The totals so far: SQL and key-value rows read and written, and alarms set apart. */
  totals(): { rowsRead: number; rowsWritten: number; alarmWrites: number };
  /** The per-unit averages: SQL rows read and written, and the rows the rest is billed as. */
  perUnit(samples: number): { rowsRead: number; rowsWritten: number; metered: boolean };
}

/** A storage meter at zero. */
export function newStorageMeter(): StorageMeter {
  const meter: StorageMeter = {
    cursors: [],
    kvReads: 0,
    kvWrites: 0,
    alarmWrites: 0,
    alarmSet: async (stub) => {
      // The run deletes its watchdog alarm just after the last attempt settles: an alarm
      // still set after a second is one that will fire.
      for (let polls = 0; polls < 20; polls++) {
        const alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
        if (alarm === null) return 0;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return 1;
    },
    totals: () => {
      let rowsRead = meter.kvReads;
      let rowsWritten = meter.kvWrites;
      for (const cursor of meter.cursors) {
        rowsRead += cursor.rowsRead;
        rowsWritten += cursor.rowsWritten;
      }
      return { rowsRead, rowsWritten, alarmWrites: meter.alarmWrites };
    },
    perUnit: (samples) => {
      const { rowsRead, rowsWritten, alarmWrites } = meter.totals();
      return {
        rowsRead: rowsRead / samples,
        rowsWritten: (rowsWritten + alarmWrites) / samples,
        // The object keeps the storage objects its constructor took: if the runtime handed
        // out new ones, nothing was counted, and the figure is reported as unmetered.
        metered: meter.cursors.length > 0,
      };
    },
  };
  return meter;
}

const METERED = Symbol('metered');

/** Meters the storage of the object behind `stub` into `meter`, once per object. */
export async function meterObjectStorage(
  stub: DurableObjectStub,
  meter: StorageMeter,
): Promise<void> {
  await runInDurableObject(stub, (_, state) => {
    const storage = state.storage as DurableObjectStorage & { [METERED]?: true };
    if (storage[METERED]) return;
    storage[METERED] = true;
    // Should the runtime refuse the wrappers, nothing is counted and the figure says so.
    try {
      wrapStorage(storage, meter);
    } catch {
      meter.cursors.length = 0;
    }
  });
}

// Counts SQL cursors, key-value reads and writes, and alarms set, passing each call through.
function wrapStorage(storage: DurableObjectStorage, meter: StorageMeter): void {
  const { sql, kv } = storage;
  const exec = sql.exec.bind(sql);
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec(query, ...bindings);
    meter.cursors.push(cursor);
    return cursor;
  }) as typeof sql.exec;
  const get = kv.get.bind(kv);
  const put = kv.put.bind(kv);
  const remove = kv.delete.bind(kv);
  kv.get = ((key: string) => {
    meter.kvReads++;
    return get(key);
  }) as typeof kv.get;
  kv.put = ((key: string, value: unknown) => {
    meter.kvWrites++;
    return put(key, value);
  }) as typeof kv.put;
  kv.delete = ((key: string) => {
    meter.kvWrites++;
    return remove(key);
  }) as typeof kv.delete;
  const setAlarm = storage.setAlarm.bind(storage);
  storage.setAlarm = (time, options) => {
    meter.alarmWrites++;
    return setAlarm(time, options);
  };
}
