/**
 * The DNS check of a subscriber host name before each delivery: A and AAAA are asked of
 * a DNS-over-HTTPS resolver (JSON API, `?name=…&type=A` with
 * `accept: application/dns-json`), and the delivery goes ahead only when every address
 * answered is public (special-purpose-addresses.ts). CNAME chains need no following: the
 * resolver answers with the whole chain, the final A or AAAA records included, and every
 * A and AAAA record in the response is checked.
 */
import * as v from 'valibot';
import { parseIpv4, parseIpv6 } from './ip-address.ts';
import { judgeAddress } from './special-purpose-addresses.ts';

/** Timeout of one DNS-over-HTTPS query, in milliseconds. */
const DNS_TIMEOUT_MS = 5000;

/** DNS record types asked and checked (RFC 1035, RFC 3596). */
const RECORD_TYPES = { A: 1, AAAA: 28 } as const;

/** DNS response codes the check tells apart (RFC 1035). */
const NOERROR = 0;
const NXDOMAIN = 3;

/** What {@link checkSubscriberHost} concluded. */
export type SubscriberHostCheck =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | {
      readonly ok: false;
      /** Why no request is sent, for the attempt record. */
      readonly error: string;
      /**
       * `false` when the name resolves to a refused address (the delivery fails for
       * good); `true` when the lookup failed or found no address (retried on schedule).
       */
      readonly retry: boolean;
    };

/** Options of {@link checkSubscriberHost}. */
export interface SubscriberHostCheckOptions {
  /** The resolver's URL (`SUBSCRIBER_DNS_RESOLVER`). */
  readonly resolver: string;
  /** Loopback answers are allowed (`ALLOW_LOCAL_SUBSCRIBERS`). */
  readonly allowLoopback: boolean;
  /** The fetch the queries go through. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Timeout of each query, in milliseconds. @default 5000 */
  readonly timeoutMs?: number;
}

// The JSON API's answer, as far as the check reads it.
const DnsJsonSchema = v.object({
  Status: v.number(),
  Answer: v.optional(v.array(v.object({ type: v.number(), data: v.string() }))),
});

/** A failed lookup: the resolver could not be asked or could not answer. */
class DnsLookupError extends Error {
  override readonly name = 'DnsLookupError';
}

/**
 * Resolves a subscriber host name (A and AAAA, concurrently) and judges every address.
 * Never throws: a failure becomes a retryable refusal.
 *
 * @param hostName - the normalized host name (no trailing dot), not an IP address.
 * @param options - the resolver, whether loopback answers are allowed, the fetch to use.
 * @returns `{ ok: true, addresses }` when every response is public (loopback too in local
 *   mode); `{ ok: false, retry: false }` when any response is a special-purpose address;
 *   `{ ok: false, retry: true }` on a resolver failure (network, timeout, non-200,
 *   a status other than NOERROR and NXDOMAIN, an unreadable answer) or when the name has
 *   no address (NXDOMAIN, or no A and no AAAA).
 *
 * @example
 * ```ts
 * await checkSubscriberHost('hooks.example.com', {
 *   resolver: 'https://cloudflare-dns.com/dns-query',
 *   allowLoopback: false,
 * });
 * // { ok: true, addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] }
 * ```
 */
export async function checkSubscriberHost(
  hostName: string,
  options: SubscriberHostCheckOptions,
): Promise<SubscriberHostCheck> {
  let answers: string[][];
  try {
    answers = await Promise.all([query(hostName, 'A', options), query(hostName, 'AAAA', options)]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, retry: true, error: `DNS lookup of ${hostName} failed: ${reason}` };
  }
  const addresses = answers.flat();
  if (addresses.length === 0) {
    return { ok: false, retry: true, error: `subscriber host ${hostName} has no address` };
  }
  for (const text of addresses) {
    const address = text.includes(':') ? parseIpv6(text) : parseIpv4(text);
    const verdict = address === undefined ? undefined : judgeAddress(address);
    if (verdict === undefined) {
      return {
        ok: false,
        retry: true,
        error: `DNS lookup of ${hostName} failed: bad address ${text}`,
      };
    }
    if (verdict.kind === 'special' || (verdict.kind === 'loopback' && !options.allowLoopback)) {
      const range = verdict.kind === 'special' ? verdict.range : 'loopback address';
      return {
        ok: false,
        retry: false,
        error: `subscriber host resolves to a private address: ${hostName} has ${text}, ${range}`,
      };
    }
  }
  return { ok: true, addresses };
}

/** One query: the A or AAAA data of the response (CNAME and other records left out). */
async function query(
  hostName: string,
  type: keyof typeof RECORD_TYPES,
  options: SubscriberHostCheckOptions,
): Promise<string[]> {
  const url = new URL(options.resolver);
  url.searchParams.set('name', hostName);
  url.searchParams.set('type', type);
  const timeoutMs = options.timeoutMs ?? DNS_TIMEOUT_MS;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url.href, {
      headers: { accept: 'application/dns-json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    throw new DnsLookupError(
      timedOut
        ? `${type} query timed out after ${timeoutMs} ms`
        : `${type} query: ${String(error)}`,
      { cause: error },
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new DnsLookupError(`${type} query answered HTTP ${response.status}`);
  }
  const parsed = v.safeParse(DnsJsonSchema, await response.json().catch(() => undefined));
  if (!parsed.success) throw new DnsLookupError(`${type} query answered no DNS JSON`);
  const { Status, Answer = [] } = parsed.output;
  if (Status === NXDOMAIN) return [];
  if (Status !== NOERROR) throw new DnsLookupError(`${type} query answered DNS status ${Status}`);
  return Answer.filter((record) => record.type === RECORD_TYPES[type]).map((record) => record.data);
}
