import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CronExpressionError, parseCron } from '../../scripts/cron-schedule.ts';
import { readCrons, SCHEDULED_PATH, startLocalCron } from '../../scripts/local-cron.ts';

// The local cron of `npm start` (scripts/local-cron.ts): when each trigger fires, and that
// every run, failed or not, is reported. test/e2e/local-cron.test.ts runs it against the
// real stack.
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('parseCron', () => {
  describe('next', () => {
    it('should fire every quarter hour on */15 * * * *, strictly after the time given', () => {
      const schedule = parseCron('*/15 * * * *');
      expect(iso(schedule.next(at('2026-01-01T10:07:30Z')))).toBe('2026-01-01T10:15:00.000Z');
      expect(iso(schedule.next(at('2026-01-01T10:15:00Z')))).toBe('2026-01-01T10:30:00.000Z');
      expect(iso(schedule.next(at('2026-12-31T23:59:59Z')))).toBe('2027-01-01T00:00:00.000Z');
    });

    it('should read lists, ranges and ranges with steps in UTC', () => {
      expect(iso(parseCron('5,50 3 * * *').next(at('2026-03-01T03:06:00Z')))).toBe(
        '2026-03-01T03:50:00.000Z',
      );
      expect(iso(parseCron('0 9-17/4 * * *').next(at('2026-03-01T13:00:00Z')))).toBe(
        '2026-03-01T17:00:00.000Z',
      );
      expect(iso(parseCron('30 2 1 */6 *').next(at('2026-02-01T00:00:00Z')))).toBe(
        '2026-07-01T02:30:00.000Z',
      );
    });

    it('should start a bare value with a step at that value', () => {
      expect(iso(parseCron('10/20 * * * *').next(at('2026-01-01T00:31:00Z')))).toBe(
        '2026-01-01T00:50:00.000Z',
      );
    });
  });

  describe('refusals', () => {
    it.each([
      ['*/15 * * *', /expected 5 fields/],
      ['0 0 * * MON', /only "\*" as the day of week/],
      ['60 * * * *', /minute 60 is outside 0-59/],
      ['0 24 * * *', /hour 24 is outside 0-23/],
      ['*/0 * * * *', /minute step "0"/],
      ['L * * * *', /minute "L" is not a number/],
      ['0 0 31 2 *', /never fires within a year/],
      ['5-1 * * * *', /minute range "5-1" is empty/],
    ])('should refuse %s naming the problem', (expression, message) => {
      expect(() => parseCron(expression)).toThrow(CronExpressionError);
      expect(() => parseCron(expression)).toThrow(message);
    });
  });
});

describe('readCrons', () => {
  it("should read wrangler.toml's [triggers] crons", () => {
    expect(readCrons(join(import.meta.dirname, '..', '..', 'wrangler.toml'))).toEqual([
      '*/15 * * * *',
    ]);
  });
});

describe('startLocalCron', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /** A stand-in for wrangler dev's scheduled endpoint answering `status`, recording queries. */
  async function scheduledEndpoint(status: number): Promise<{ url: string; calls: URL[] }> {
    const calls: URL[] = [];
    server = createServer((req, res) => {
      calls.push(new URL(req.url ?? '/', 'http://gateway.test'));
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'exception');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
  }

  async function collect(gatewayUrl: string, runs: number) {
    const lines: string[] = [];
    const errors: string[] = [];
    const cron = startLocalCron({
      gatewayUrl,
      crons: ['*/15 * * * *', '0 0 * * SUN'],
      intervalMs: 100,
      log: (line) => lines.push(line),
      error: (line) => errors.push(line),
    });
    const deadline = Date.now() + 10_000;
    while (lines.length + errors.filter((line) => line.includes('failed')).length < runs) {
      if (Date.now() > deadline) throw new Error('the cron did not run');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    cron.stop();
    return { cron, lines, errors };
  }

  it('should call the scheduled endpoint with the cron and the time, and log each run', async () => {
    const endpoint = await scheduledEndpoint(200);
    const before = Date.now();
    const { cron, lines, errors } = await collect(endpoint.url, 2);
    expect(cron.running).toEqual(['*/15 * * * *']);
    expect(errors).toEqual([
      'cron: cron "0 0 * * SUN": the local cron reads only "*" as the day of week; it does not run locally',
    ]);
    const call = endpoint.calls[0] as URL;
    expect(call.pathname).toBe(SCHEDULED_PATH);
    expect(call.searchParams.get('cron')).toBe('*/15 * * * *');
    expect(Number(call.searchParams.get('time'))).toBeGreaterThanOrEqual(before);
    expect(lines[0]).toMatch(/^cron "\*\/15 \* \* \* \*" ran \(scheduled time \d{4}-.*Z\)$/);
  });

  it('should report a failed run with its status and go on', async () => {
    const endpoint = await scheduledEndpoint(500);
    const { errors } = await collect(endpoint.url, 2);
    const failures = errors.filter((line) => line.includes('failed'));
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures[0]).toMatch(/^cron "\*\/15 \* \* \* \*" at .*Z failed: HTTP 500 exception$/);
  });

  it('should report a gateway that does not answer', async () => {
    const endpoint = await scheduledEndpoint(200);
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    const { errors } = await collect(endpoint.url, 1);
    expect(errors.find((line) => line.includes('failed'))).toMatch(/failed: fetch failed/);
  });
});
