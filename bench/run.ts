// One entry point for the benchmarks: `npm run bench -- <name> [arguments]`. Run through
// npm, so the project's Node 22 (node_modules/.bin) runs it: wrangler and miniflare need it.
import { argv, exit } from 'node:process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = {
  gateway: [
    './gateway.ts',
    'gateway throughput against a logging floor, POST with 1 and 3 D1 shards, CPU ms/request',
  ],
  relay: ['./relay.ts', 'webhook ingest with 1 and 3 D1 shards, duplicate storm, first delivery'],
  'relay-isolation': [
    './relay-isolation.ts',
    "a healthy subscriber's first attempts while another stalls until the timeout",
  ],
  signing: ['./signing.ts', 'signRequest against a bare crypto.subtle.sign'],
  overhead: ['./overhead.ts', 'SDK call against a hand-written sign + fetch + JSON.parse'],
  'sdk-profile': ['./sdk-profile.ts', 'where an SDK call spends its microseconds, by category'],
  bundle: ['./bundle-size.ts', 'gzipped bundle sizes against their budgets'],
  console: ['./console-size.ts', 'the operator console, gzipped, against its 60 KiB budget'],
  package: ['./package-size.ts', 'the packed tarball, and Workers bundling the installed package'],
  profile: ['./profile-gateway.ts', '[get|post]: where the gateway isolate spends its CPU'],
  'compact-body': ['./compact-body.ts', 'bytes and CPU of bodies and excerpts stored compactly'],
  limiter: ['./limiter.ts', 'take calls a second one rate limiter object answers, and 2 or 4'],
  scale: ['./scale.ts', '[N]: D1, Queue and Durable Object use per event and POST, ceilings, cost'],
} as const;

type Name = keyof typeof BENCHMARKS;
const name = argv[2];

if (name === undefined || !Object.hasOwn(BENCHMARKS, name)) {
  if (name !== undefined) console.error(`Unknown benchmark: ${name}\n`);
  console.error('Usage: npm run bench -- <name> [arguments]\n');
  for (const [known, [, what]] of Object.entries(BENCHMARKS)) {
    console.error(`  ${known.padEnd(15)} ${what}`);
  }
  exit(1);
}

// The benchmark sees the process.argv it would see if run directly (`node bench/<file>.ts
// ...`): its own path, then its arguments. bundle-size.ts runs only when it is argv[1].
const file = new URL(BENCHMARKS[name as Name][0], import.meta.url);
argv.splice(1, 2, fileURLToPath(file));
await import(file.href);
