/**
 * A recorder over the real `CACHE` namespace for the cache tests: every call passes
 * through to the real binding; reads and writes are listed with their key, and the
 * writes (which the Worker starts before it answers and finishes after, in `waitUntil`)
 * can be awaited, so a test knows what is in KV before its next request.
 */
import { env } from 'cloudflare:workers';

/** What a recorder saw: `get <key>` and `put <key>`, in call order. */
export interface KvRecorder {
  /** The binding to pass to the Worker: `fetchGateway(request, { CACHE: recorder.kv })`. */
  readonly kv: KVNamespace;
  /** Every read and write so far, `get <key>` or `put <key>`. */
  readonly calls: string[];
  /** Resolves once every write started so far has landed (or failed). */
  settled(): Promise<void>;
  /** Deletes every key written through the recorder, and forgets the calls. */
  clear(): Promise<void>;
}

const READS = new Set(['get', 'getWithMetadata']);

/** A recorder over the real `CACHE` namespace. */
export function kvRecorder(): KvRecorder {
  const calls: string[] = [];
  const writes: Promise<unknown>[] = [];
  const written = new Set<string>();
  const kv = new Proxy(env.CACHE, {
    get: (target, name) => {
      const value = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      if (name === 'put') {
        return (key: string, ...rest: unknown[]) => {
          calls.push(`put ${key}`);
          written.add(key);
          const write = Reflect.apply(value, target, [key, ...rest]) as Promise<unknown>;
          writes.push(write.catch(() => undefined));
          return write;
        };
      }
      if (typeof name === 'string' && READS.has(name)) {
        return (key: string, ...rest: unknown[]) => {
          calls.push(`get ${key}`);
          return Reflect.apply(value, target, [key, ...rest]);
        };
      }
      return value.bind(target);
    },
  });
  return {
    kv,
    calls,
    settled: async () => {
      await Promise.all(writes);
    },
    clear: async () => {
      await Promise.all(writes.splice(0));
      await Promise.all([...written].map((key) => env.CACHE.delete(key)));
      written.clear();
      calls.splice(0);
    },
  };
}
