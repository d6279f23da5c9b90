/**
 * Every `npx wrangler ...` command in docs/deploy.md is one the pinned wrangler knows, with
 * no more positional arguments than its usage takes and only options its `--help` lists:
 * a reader following the guide never meets "Unknown argument".
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const WRANGLER = join(root, 'node_modules', '.bin', 'wrangler');

/** The `npx wrangler` lines of the guide's shell blocks, comments and line breaks removed. */
function guideCommands(): string[] {
  const guide = readFileSync(join(root, 'docs', 'deploy.md'), 'utf8');
  const blocks = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, body = '']) => body);
  return blocks
    .flatMap((body) => body.replace(/\\\n\s*/g, ' ').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npx wrangler '));
}

/** Splits a command line into words, keeping quoted strings whole. */
function words(line: string): string[] {
  return [...line.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map(([word]) => word);
}

const helpCache = new Map<string, string>();

function help(command: readonly string[]): string {
  const key = command.join(' ');
  let text = helpCache.get(key);
  if (text === undefined) {
    const run = spawnSync(WRANGLER, [...command, '--help'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    });
    text = `${run.stdout}\n${run.stderr}`;
    helpCache.set(key, text);
  }
  return text;
}

/**
 * The longest leading run of words that wrangler's help names as a command (its usage line
 * reads `wrangler <those words> ...`), and the words left over.
 */
function splitCommand(args: readonly string[]): { command: string[]; rest: string[] } {
  const leading = args.slice(0, args.findIndex((word) => word.startsWith('-')) >>> 0);
  for (let length = leading.length; length > 0; length--) {
    const command = leading.slice(0, length);
    const usage = new RegExp(`^wrangler ${command.join(' ')}(\\s|$)`, 'm');
    if (usage.test(help(command))) return { command, rest: args.slice(length) };
  }
  return { command: [], rest: [...args] };
}

describe('docs/deploy.md', () => {
  const commands = guideCommands();

  it('should list the commands in the order a first deploy needs them', () => {
    const order = [
      'npx wrangler login',
      'npx wrangler d1 create',
      'npx wrangler queues create edgepay-deliveries',
      'npx wrangler queues create edgepay-deliveries-dlq',
      'npx wrangler d1 migrations apply DB --remote',
      'npx wrangler secret put WEBHOOK_SECRET',
      'npx wrangler deploy',
      'npx wrangler rollback',
    ];
    const positions = order.map((start) => commands.findIndex((line) => line.startsWith(start)));
    expect(
      positions.every((position) => position >= 0),
      JSON.stringify(positions),
    ).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('should aim every command that touches the deployment at [env.production]', () => {
    const remote = commands.filter((line) =>
      /^npx wrangler (deploy|secret|rollback|deployments|d1 migrations)/.test(line),
    );
    expect(remote.length).toBeGreaterThanOrEqual(8);
    for (const line of remote) expect(line).toContain('--env production');
  });

  it.each(guideCommands())(
    'should be a command the pinned wrangler accepts: %s',
    (line) => {
      const args = words(line).slice(2);
      const { command, rest } = splitCommand(args);
      expect(command.length, `no wrangler command in "${line}"`).toBeGreaterThan(0);
      const text = help(command);
      const usage = new RegExp(`^wrangler ${command.join(' ')}(.*)$`, 'm').exec(text)?.[1] ?? '';
      const positionals = (usage.match(/<[^>]+>|\[[^\]]+\]/g) ?? []).length;
      const given = rest.filter((word, index) => {
        if (word.startsWith('-')) return false;
        // A value of the option before it (`--var KEY:VALUE`, `--message "..."`).
        const previous = rest[index - 1];
        return previous === undefined || !previous.startsWith('--') || previous.includes('=');
      });
      expect(given.length, `positional arguments of "${line}"`).toBeLessThanOrEqual(positionals);
      for (const option of rest.filter((word) => word.startsWith('--'))) {
        const name = option.split('=')[0] ?? option;
        expect(text, `"${name}" in wrangler ${command.join(' ')} --help`).toMatch(
          new RegExp(`\\s${name}[\\s,]`),
        );
      }
    },
    120_000,
  );
});
