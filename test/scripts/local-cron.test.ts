import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Cron } from 'croner';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLOUDFLARE_CRON,
  readCrons,
  SCHEDULED_PATH,
  scheduledTime,
  startLocalCron,
} from '../../scripts/local-cron.ts';

// The local cron of `npm start` (scripts/local-cron.ts): croner reads and times the
// expressions; what is ours is the dialect it is told to read, the scheduled time sent, and
// that every run, failed, skipped or refused, is reported. test/e2e/local-cron.test.ts runs
// it against the real stack.
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
/** The test interval: croner's finest step, one second. */
const INTERVAL_MS = 1000;
const WAIT_MS = 10_000;

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('readCrons', () => {
  it("should read wrangler.toml's [triggers] crons", () => {
    expect(readCrons(join(import.meta.dirname, '..', '..', 'wrangler.toml'))).toEqual([
      '*/15 * * * *',
    ]);
  });
});

describe('CLOUDFLARE_CRON', () => {
  it('should read the day of week as Cloudflare does: 1-7 or SUN-SAT from Sunday, in UTC', () => {
    const next = (expression: string) =>
      new Cron(expression, { ...CLOUDFLARE_CRON })
        .nextRuns(2, new Date(at('2026-01-01T00:00:00Z')))
        .map((time) => iso(time.getTime()));
    // 2026-01-01 is a Thursday.
    const sundays = ['2026-01-04T17:00:00.000Z', '2026-01-11T17:00:00.000Z'];
    expect(next('0 17 * * 1')).toEqual(sundays);
    expect(next('0 17 * * sun')).toEqual(sundays);
    expect(next('10 7 * * 2-6')).toEqual(['2026-01-01T07:10:00.000Z', '2026-01-02T07:10:00.000Z']);
    expect(next('0 18 * * 6L')).toEqual(['2026-01-30T18:00:00.000Z', '2026-02-27T18:00:00.000Z']);
  });
});

describe('scheduledTime', () => {
  const quarterHours = new Cron('*/15 * * * *', { ...CLOUDFLARE_CRON });

  it.each([
    ['exactly on time', '2026-01-01T10:15:00.000Z'],
    ['a few milliseconds late', '2026-01-01T10:15:00.004Z'],
    ['after a sleep', '2026-01-01T10:29:59.999Z'],
  ])('should name the time the schedule named for a run fired %s', (_, firedAt) => {
    expect(iso(scheduledTime(quarterHours, at(firedAt)))).toBe('2026-01-01T10:15:00.000Z');
  });
});

describe('startLocalCron', () => {
  let server: Server | undefined;
  /** Run after each test, passed or failed: stop its crons, answer held requests. */
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /** A stand-in for wrangler dev's scheduled endpoint, recording the queries it got. */
  async function scheduledEndpoint(
    answer: (res: ServerResponse, call: number) => void,
  ): Promise<{ url: string; calls: URL[] }> {
    const calls: URL[] = [];
    server = createServer((req: IncomingMessage, res) => {
      calls.push(new URL(req.url ?? '/', 'http://gateway.test'));
      answer(res, calls.length);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
  }

  const answerWith = (status: number) => (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(status === 200 ? 'ok' : 'exception');
  };

  function start(gatewayUrl: string, crons: readonly string[]) {
    const lines: string[] = [];
    const errors: string[] = [];
    const cron = startLocalCron({
      gatewayUrl,
      crons,
      intervalMs: INTERVAL_MS,
      log: (line) => lines.push(line),
      error: (line) => errors.push(line),
    });
    cleanups.push(() => cron.stop());
    return { cron, lines, errors };
  }

  it("should report an expression outside Cloudflare's dialect, or one that never fires, and run the others", async () => {
    const endpoint = await scheduledEndpoint(answerWith(200));
    const { cron, lines, errors } = start(endpoint.url, [
      '*/15 * * * *',
      '0 0 * * 0',
      '0 */15 * * * *',
      '0 0 31 2 *',
      '0 17 * * SUN',
    ]);
    const ran = () => new Set(endpoint.calls.map((call) => call.searchParams.get('cron')));
    await until('a run of each readable cron', () => ran().size >= 2 && lines.length >= 2);
    cron.stop();
    expect(cron.running).toEqual(['*/15 * * * *', '0 17 * * SUN']);
    expect(errors).toEqual([
      expect.stringMatching(
        /^cron: cron "0 0 \* \* 0": .*dayOfWeek.*day of week 1-7 from Sunday or SUN-SAT\); it does not run locally$/,
      ),
      expect.stringMatching(
        /^cron: cron "0 \*\/15 \* \* \* \*": .*5 fields in UTC.*; it does not run locally$/,
      ),
      'cron: cron "0 0 31 2 *": it never fires; it does not run locally',
    ]);
    expect(ran()).toEqual(new Set(['*/15 * * * *', '0 17 * * SUN']));
  }, 15_000);

  it('should call the scheduled endpoint with the cron and the scheduled time, and log each run', async () => {
    const endpoint = await scheduledEndpoint(answerWith(200));
    const before = Date.now();
    const { cron, lines, errors } = start(endpoint.url, ['*/15 * * * *']);
    await until('two runs', () => lines.length >= 2);
    cron.stop();
    expect(errors).toEqual([]);
    const [first, second] = endpoint.calls as [URL, URL];
    expect(first.pathname).toBe(SCHEDULED_PATH);
    expect(first.searchParams.get('cron')).toBe('*/15 * * * *');
    const times = [first, second].map((call) => Number(call.searchParams.get('time')));
    // The whole second the test schedule named, never before the cron started.
    for (const time of times) {
      expect(time % 1000).toBe(0);
      expect(time).toBeGreaterThan(before - 1000);
    }
    expect(times[1]).toBeGreaterThan(times[0] as number);
    expect(lines.slice(0, 2)).toEqual(
      times.map((time) => `cron "*/15 * * * *" ran (scheduled time ${iso(time)})`),
    );
  }, 15_000);

  it('should report a failed run with its status and go on', async () => {
    const endpoint = await scheduledEndpoint(answerWith(500));
    const { cron, errors } = start(endpoint.url, ['*/15 * * * *']);
    await until('two failed runs', () => errors.length >= 2);
    cron.stop();
    const time = Number(endpoint.calls[0]?.searchParams.get('time'));
    expect(errors[0]).toBe(`cron "*/15 * * * *" at ${iso(time)} failed: HTTP 500 exception`);
    expect(errors[1]).toMatch(/^cron "\*\/15 \* \* \* \*" at .*Z failed: HTTP 500 exception$/);
  }, 15_000);

  it('should report a gateway that does not answer', async () => {
    const endpoint = await scheduledEndpoint(answerWith(200));
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    const { cron, errors } = start(endpoint.url, ['*/15 * * * *']);
    await until('a failed run', () => errors.length >= 1);
    cron.stop();
    expect(errors[0]).toMatch(/failed: fetch failed$/);
  }, 15_000);

  it('should skip and report a run due while the previous one is still going', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(() => release());
    const endpoint = await scheduledEndpoint((res, call) => {
      if (call === 1) void held.then(() => answerWith(200)(res));
      else answerWith(200)(res);
    });
    const { cron, lines, errors } = start(endpoint.url, ['*/15 * * * *']);
    await until('a skipped run', () => errors.length >= 1);
    expect(endpoint.calls).toHaveLength(1);
    release();
    await until('the held run to finish', () => lines.length >= 1);
    cron.stop();
    const heldTime = Number(endpoint.calls[0]?.searchParams.get('time'));
    expect(lines[0]).toBe(`cron "*/15 * * * *" ran (scheduled time ${iso(heldTime)})`);
    expect(errors[0]).toMatch(
      /^cron "\*\/15 \* \* \* \*" at (.*Z) skipped: the previous run is still going$/,
    );
    const skipped = Date.parse(errors[0]?.split(' at ')[1]?.split(' ')[0] ?? '');
    expect(skipped).toBeGreaterThan(heldTime);
  }, 15_000);

  it('should make no run after stop()', async () => {
    const endpoint = await scheduledEndpoint(answerWith(200));
    const { cron, lines } = start(endpoint.url, ['*/15 * * * *']);
    await until('a run', () => lines.length >= 1);
    cron.stop();
    const stoppedAt = Date.now();
    const calls = endpoint.calls.length;
    // Two and a half test intervals: a timer left behind would have fired twice.
    await new Promise((resolve) => setTimeout(resolve, 2.5 * INTERVAL_MS));
    // A run that began before stop() may have its request still on the way then: it lands
    // and is recorded. No run begins after: every recorded scheduled time is before the stop.
    expect(endpoint.calls.length).toBeLessThanOrEqual(calls + 1);
    expect(lines).toHaveLength(endpoint.calls.length);
    const scheduled = lines.map((line) =>
      Date.parse(/scheduled time (\S+)\)/.exec(line)?.[1] ?? ''),
    );
    for (const time of scheduled) expect(time).toBeLessThanOrEqual(stoppedAt);
  }, 15_000);

  it('should never keep the process alive', async () => {
    // A Node process that starts the local cron, on its schedule and on the test interval,
    // and does nothing else: it ends on its own only if croner's timers are unreferenced.
    const module = pathToFileURL(join(import.meta.dirname, '..', '..', 'scripts', 'local-cron.ts'));
    const code = [
      `import { startLocalCron } from '${module.href}';`,
      `const gatewayUrl = 'http://127.0.0.1:9';`,
      `const a = startLocalCron({ gatewayUrl, crons: ['* * * * *'] });`,
      `const b = startLocalCron({ gatewayUrl, crons: ['*/15 * * * *'], intervalMs: 1000 });`,
      `console.log(JSON.stringify([...a.running, ...b.running]));`,
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const exit = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(guard);
    expect(JSON.parse(output)).toEqual(['* * * * *', '*/15 * * * *']);
    expect(exit).toBe(0);
  }, 30_000);
});
