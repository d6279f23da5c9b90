/**
 * What `npm start` keeps of wrangler dev's output (scripts/wrangler-output.ts), on lines as
 * wrangler 4 prints them on a machine without internet: the bindings table, the failed
 * `Request.cf` fetch with its stack, the local cron note and the update notice go; the
 * banner, the request log and other warnings and errors stay.
 */
import { describe, expect, it } from 'vitest';
import { WranglerOutputFilter } from '../../scripts/wrangler-output.ts';

const ESC = String.fromCharCode(27);

/** The lines `filter` keeps of `lines`, in order. */
function kept(lines: readonly string[]): string[] {
  const quiet = new WranglerOutputFilter();
  return lines.flatMap((line) => {
    const shown = quiet.filter(line);
    return shown === null ? [] : [shown];
  });
}

describe('WranglerOutputFilter', () => {
  it("should drop what a local stack does not need, and keep wrangler's own lines", () => {
    const output = [
      ' ⛅️ wrangler 4.155.0 (update available 4.168.0)',
      'Using secrets defined in .dev.vars.example',
      'Your Worker has access to the following bindings:',
      'Binding                          Resource                  Mode',
      'env.DB (edgepay)                 D1 Database               local',
      'env.GATEWAY_MODE ("(hidden)")    Environment Variable      local',
      '',
      '[wrangler:warn] Unable to fetch the `Request.cf` object! Falling back to a default placeholder...',
      'Error: getaddrinfo ENOTFOUND workers.cloudflare.com',
      '    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)',
      '    at GetAddrInfoReqWrap.callbackTrampoline (node:internal/async_hooks:130:17)',
      `${ESC}[33m▲ ${ESC}[43;33m[${ESC}[43;30mWARNING${ESC}[43;33m]${ESC}[0m ${ESC}[1mScheduled Workers are not automatically triggered during local development.${ESC}[0m`,
      '',
      '  To manually trigger a scheduled event, run:',
      '    curl "http://127.0.0.1:8787/cdn-cgi/local/scheduled"',
      '',
      '⎔ Starting local server...',
      '[wrangler:info] Ready on http://127.0.0.1:8787',
      '[wrangler:warn] Something else went wrong',
      'Error: a real failure',
      '[wrangler:info] GET /healthz 200 OK (1391ms)',
    ];
    expect(kept(output)).toEqual([
      ' ⛅️ wrangler 4.155.0',
      'Using secrets defined in .dev.vars.example',
      '⎔ Starting local server...',
      '[wrangler:info] Ready on http://127.0.0.1:8787',
      '[wrangler:warn] Something else went wrong',
      'Error: a real failure',
      '[wrangler:info] GET /healthz 200 OK (1391ms)',
    ]);
  });

  it('should drop the bindings table each time wrangler prints it again', () => {
    const table = ['Your Worker has access to the following bindings:', 'env.DB  D1  local', ''];
    expect(kept([...table, '⎔ Reloading local server...', ...table, 'done'])).toEqual([
      '⎔ Reloading local server...',
      'done',
    ]);
  });
});
