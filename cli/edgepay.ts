#!/usr/bin/env node
// The `edgepay` command (package.json "bin"). Runs from source with Node 22's type
// stripping (`node cli/edgepay.ts`), under Bun and Deno, and compiled to dist/cli/.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { runSandboxCommand } from './sandbox-command.ts';
import { runSignCommand } from './sign-command.ts';
import { UsageError } from './usage-error.ts';

/** `edgepay --help`. */
const USAGE = `Usage: edgepay <command> [options]

Commands:
  sandbox      serve the payments API sandbox emulator over HTTP
               (edgepay sandbox --help)
  sign         print the signature headers of one request, for curl
               (edgepay sign --help)

Options:
  -h, --help   show this help
  --version    print the version of edgepay
`;

/**
 * The version in edgepay's package.json: two levels up when compiled
 * (dist/cli/edgepay.js), one level up from source (cli/edgepay.ts).
 */
function packageVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'edgepay' && pkg.version !== undefined) return pkg.version;
    } catch {
      // Not there in this layout; try the next one.
    }
  }
  return 'unknown';
}

/** Options given before any command: only `--help` and `--version`. */
function runGlobalOptions(args: string[]): void {
  let values: { help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), USAGE);
  }
  if (values.version === true) process.stdout.write(`${packageVersion()}\n`);
  else if (values.help === true) process.stdout.write(USAGE);
  else throw new UsageError('no command given', USAGE);
}

/**
 * Runs the command line. Usage errors print the message and the usage to stderr and
 * set exit status 2; `edgepay sandbox` keeps running until a signal stops it.
 *
 * @param args - the arguments after the program name.
 */
async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  try {
    if (command === 'sandbox') await runSandboxCommand(rest);
    else if (command === 'sign') await runSignCommand(rest);
    else if (command === undefined || command.startsWith('-')) runGlobalOptions(args);
    else throw new UsageError(`unknown command "${command}"`, USAGE);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`edgepay: ${error.message}\n\n${error.usage}`);
    process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `edgepay: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
