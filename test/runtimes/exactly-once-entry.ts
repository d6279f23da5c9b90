// Entry point of the exactly-once walk for runtimes without vitest (Deno, Bun): prints one JSON line.
import { exactlyOnceWalk } from '../shared/exactly-once-walk.ts';

console.log(JSON.stringify(await exactlyOnceWalk()));
