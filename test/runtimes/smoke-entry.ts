// Entry point of the smoke walk for runtimes without vitest (Deno, Bun): prints one JSON line.
import { inProcessTarget, smokeWalk } from '../shared/smoke-walk.ts';

const steps = await smokeWalk(inProcessTarget());
console.log(JSON.stringify({ ok: true, steps }));
