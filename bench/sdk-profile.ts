// Where an SDK call's microseconds go: a V8 CPU profile (node:inspector, sampled every 50 µs)
// of a loop of `client.transfers.verify` and one of `client.transfers.initialize` against the
// in-process sandbox, each frame's self time put in the category of the nearest frame (itself
// or a caller) that names one: the SDK's modules by what they do, valibot, the timers and
// abort plumbing, the Request/Response objects, the sandbox itself. Run: npm run bench --
// sdk-profile (CALLS, 5,000 by default).
import { Session } from 'node:inspector/promises';
import { PaymentsClient } from '../lib/index.ts';
import { createSandbox } from '../lib/testing/index.ts';

const CALLS = Number(process.env.CALLS ?? 5_000);
const BASE = 'http://sandbox.bench';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const SANDBOX = 'sandbox (the upstream itself, and the Request it is handed)';
const UPSTREAM = /lib\/testing\/|bench\/sdk-profile\.ts/;

// First match wins, tried on the frame's URL and then its function name.
const CATEGORIES: readonly (readonly [string, RegExp])[] = [
  ['input and answer validation (valibot)', /valibot/],
  ['redaction of personal data', /lib\/internal\/redact\.ts/],
  ['signing (HMAC, hex)', /lib\/signing\.ts|lib\/internal\/hex\.ts/],
  ['request ids', /lib\/internal\/request-id\.ts/],
  ['hooks and logger', /lib\/internal\/hooks\.ts/],
  ['normalization (shape, envelope)', /lib\/responses\/|lib\/endpoints\.ts|lib\/money\.ts/],
  ['retry policy and settle window', /lib\/internal\/(settle|retry-timing|delay|lookup)\.ts/],
  ['attempt: timeout, abort, fetch, read', /lib\/internal\/(attempt|until-aborted)\.ts/],
  ['call set-up: URL, headers, body', /lib\/internal\/(transport|json-body|path)\.ts/],
  ['client: endpoint table, resource', /lib\/internal\/core\.ts|lib\/resources\/|lib\/client\.ts/],
  ['timers', /timers|Timeout/],
  ['AbortController and events', /abort_controller|event_target|AbortSignal|EventTarget/],
  ['Request, Response, Headers, body streams', /undici|internal\/webstreams|internal\/deps/],
  ['garbage collection', /^\(garbage collector\)$/],
];

function categoryOf(node: ProfileNode): string | undefined {
  const { url, functionName } = node.callFrame;
  for (const [name, pattern] of CATEGORIES) {
    if (pattern.test(url) || (url === '' && pattern.test(functionName))) return name;
  }
  return undefined;
}

/** Self time in microseconds by category; a frame with none takes its nearest caller's. */
function selfTimeByCategory(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  // Whatever the sandbox or the bench's fetch glue calls (its Request, its own signature
  // check) is the upstream's time, not the SDK's.
  const upstream = new Map<number, boolean>();
  const inUpstream = (id: number): boolean => {
    const known = upstream.get(id);
    if (known !== undefined) return known;
    const url = byId.get(id)?.callFrame.url ?? '';
    const up = parent.get(id);
    const found = UPSTREAM.test(url) || (up !== undefined && inUpstream(up));
    upstream.set(id, found);
    return found;
  };
  const category = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = category.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const name = inUpstream(id) ? SANDBOX : node === undefined ? undefined : categoryOf(node);
    const up = parent.get(id);
    const found = name ?? (up === undefined ? 'runtime (promises, microtasks)' : resolve(up));
    category.set(id, found);
    return found;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const fn = node?.callFrame.functionName ?? '';
    if (fn === '(idle)' || fn === '(program)' || fn === '(root)') return;
    const name = resolve(id);
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return totals;
}

async function profiled(session: Session, run: () => Promise<void>): Promise<Profile> {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
  await run();
  const { profile } = await session.post('Profiler.stop');
  return profile as unknown as Profile;
}

const sandbox = createSandbox();
const client = new PaymentsClient({
  keyId: 'sandbox-key',
  secret: 'sandbox-secret',
  baseUrl: BASE,
  fetch: (input, init) => sandbox.fetch(new Request(input, init)),
});
const transfer = (reference: string) => ({
  reference,
  amount: 50,
  currency: 'NGN',
  destination_bank_code: '058',
  destination_bank_account: '0123456789',
  destination_bank_name: 'GTBank',
  customer_name: 'Grace Hopper',
  customer_email: 'grace@example.com',
});
await client.transfers.initialize(transfer('tr_profile'));
const cases: Record<string, (i: number) => Promise<unknown>> = {
  'transfers.verify': () => client.transfers.verify('tr_profile'),
  'transfers.initialize': (i) => client.transfers.initialize(transfer(`tr_profile_${i}`)),
};

const session = new Session();
session.connect();
const columns = Object.keys(cases);
const results = new Map<string, Map<string, number>>();
const wall = new Map<string, number>();
for (const [name, call] of Object.entries(cases)) {
  for (let i = 0; i < 500; i++) await call(-i - 1); // warm-up, not profiled
  const started = performance.now();
  const profile = await profiled(session, async () => {
    for (let i = 0; i < CALLS; i++) await call(i);
  });
  wall.set(name, ((performance.now() - started) * 1000) / CALLS);
  results.set(name, selfTimeByCategory(profile));
}
session.disconnect();

const names = [...new Set([...results.values()].flatMap((totals) => [...totals.keys()]))];
const perCall = (column: string, name: string) => (results.get(column)?.get(name) ?? 0) / CALLS;
names.sort((a, b) => perCall(columns[0] ?? '', b) - perCall(columns[0] ?? '', a));
console.log(`| where (µs per call, sampled self time) | ${columns.join(' | ')} |`);
console.log(`|---|${columns.map(() => '---').join('|')}|`);
for (const name of names) {
  console.log(`| ${name} | ${columns.map((c) => perCall(c, name).toFixed(1)).join(' | ')} |`);
}
const sum = (column: string) => names.reduce((total, name) => total + perCall(column, name), 0);
console.log(`| **sampled, all** | ${columns.map((c) => sum(c).toFixed(1)).join(' | ')} |`);
console.log(
  `| wall time per call, profiler attached | ${columns.map((c) => (wall.get(c) ?? 0).toFixed(1)).join(' | ')} |`,
);
console.log(`\n${CALLS} calls each after 500 unprofiled, Node ${process.version}`);
sandbox.close();
