import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { meteredDb, newMeter, withMeteredFetch } from './metered-bindings.ts';

// The load model's figures are only as right as these meters: each count is checked against
// what the real D1 reports for the same statement run without them.
const PROBE = 'CREATE TABLE IF NOT EXISTS scale_meter_probe (id TEXT PRIMARY KEY, n INTEGER)';
const INSERT = 'INSERT INTO scale_meter_probe (id, n) VALUES (?1, ?2)';

beforeAll(async () => {
  await env.DB.prepare(PROBE).run();
});

describe('load model meters', () => {
  it('should count a batch as one round trip of its statements, with the rows D1 reports', async () => {
    const key = crypto.randomUUID();
    const unmetered = await env.DB.batch([
      env.DB.prepare(INSERT).bind(`${key}-x`, 1),
      env.DB.prepare(INSERT).bind(`${key}-y`, 2),
    ]);
    const written = unmetered.reduce((sum, result) => sum + (result.meta.rows_written ?? 0), 0);
    const meter = newMeter();
    const db = meteredDb(meter);

    await db.batch([
      db.prepare(INSERT).bind(`${key}-a`, 1),
      db.prepare(INSERT).bind(`${key}-b`, 2),
    ]);

    expect(written).toBeGreaterThanOrEqual(2);
    expect(meter).toMatchObject({
      statements: 2,
      roundTrips: 1,
      inFlight: 0,
      rowsWritten: written,
    });
  });

  it("should count first() as a round trip with its rows read, answering as D1's first() does", async () => {
    const key = crypto.randomUUID();
    await env.DB.prepare(INSERT).bind(key, 7).run();
    const select = 'SELECT n FROM scale_meter_probe WHERE id = ?1';
    const { meta } = await env.DB.prepare(select).bind(key).all();
    const meter = newMeter();
    const db = meteredDb(meter);

    const row = await db.prepare(select).bind(key).first<{ n: number }>();
    const n = await db.prepare(select).bind(key).first<number>('n');
    const none = await db.prepare(select).bind(`${key}-missing`).first();

    expect([row, n, none]).toEqual([{ n: 7 }, 7, null]);
    expect(meter).toMatchObject({ statements: 3, roundTrips: 3 });
    expect(meta.rows_read).toBeGreaterThan(0);
    expect(meter.rowsRead).toBeGreaterThanOrEqual(2 * (meta.rows_read ?? 0));
  });

  it('should hold a round trip in flight until D1 answers it', async () => {
    const meter = newMeter();
    const pending = meteredDb(meter).prepare('SELECT 1').run();
    expect(meter.inFlight).toBe(1);
    await pending;
    expect(meter).toMatchObject({ roundTrips: 1, inFlight: 0 });
  });

  it('should count fetch subrequests only while metering, and put fetch back after', async () => {
    const meter = newMeter();
    const original = globalThis.fetch;
    await withMeteredFetch(meter, async () => {
      const res = await fetch(`${inject('sandboxUrl')}/__sandbox/requests?request_id=none`);
      await res.body?.cancel();
    });
    await (
      await fetch(`${inject('sandboxUrl')}/__sandbox/requests?request_id=none`)
    ).body?.cancel();
    expect(meter.fetches).toBe(1);
    expect(globalThis.fetch).toBe(original);
  });
});
