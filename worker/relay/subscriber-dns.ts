/**
 * The DNS check of a subscriber host name before each delivery: A and AAAA are asked of
 * a DNS-over-HTTPS resolver (JSON API, `?name=…&type=A` with
 * `accept: application/dns-json`), and the delivery goes ahead only when every address
 * answered is public (special-purpose-addresses.ts). CNAME chains need no following: the
 * resolver answers with the whole chain, the final A or AAAA records included, and every
 * A and AAAA record in the response is checked.
 *
 * The delivery's own `fetch` resolves the name again, through the platform's resolver, and
 * nothing a Worker can do pins it to the addresses checked here. So the name is asked again
 * once the request is done ({@link recheckSubscriberHost}): a name that turned private, or
 * whose addresses changed meanwhile, keeps nothing of the answer it gave (docs/assumptions.md,
 * "DNS rebinding", says what this closes and what it cannot).
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

/** What {@link recheckSubscriberHost} found after the request went out. */
export type SubscriberHostRecheck =
  /** Every address answered now was among the checked ones. */
  | { readonly kind: 'unchanged' }
  /**
   * Every address is still public, but some are new, or the lookup failed: the answer may
   * have come from another host than the one checked.
   */
  | { readonly kind: 'changed'; readonly note: string }
  /** The name now resolves to a refused address: the request may have gone there. */
  | { readonly kind: 'refused'; readonly error: string };

/**
 * Asks for a subscriber host name again after a delivery request went out, and compares
 * the answer with the addresses checked before it (a DNS rebinding shows as a change).
 * Never throws.
 *
 * @param hostName - the name checked before the request.
 * @param checked - the addresses {@link checkSubscriberHost} accepted for it.
 * @param options - as for {@link checkSubscriberHost}.
 * @returns `unchanged` when every address answered is among `checked` (compared as
 *   addresses, so `::1` and `0:0:0:0:0:0:0:1` are the same); `refused` when any is a refused
 *   address; `changed`, with a note for the attempt record, when some are new or the lookup
 *   failed.
 */
export async function recheckSubscriberHost(
  hostName: string,
  checked: readonly string[],
  options: SubscriberHostCheckOptions,
): Promise<SubscriberHostRecheck> {
  const now = await checkSubscriberHost(hostName, options);
  if (!now.ok && !now.retry) {
    return { kind: 'refused', error: `${now.error}, asked again after the request` };
  }
  if (!now.ok) {
    return { kind: 'changed', note: `${hostName} could not be asked again: ${now.error}` };
  }
  const before = new Set(checked.map(addressKey));
  const added = now.addresses.filter((address) => !before.has(addressKey(address)));
  if (added.length === 0) return { kind: 'unchanged' };
  return {
    kind: 'changed',
    note: `${hostName} resolved to ${checked.join(', ')} before the request and to ${now.addresses.join(', ')} after it`,
  };
}

/** One address's canonical form: its bytes, so two spellings of one address compare equal. */
function addressKey(text: string): string {
  const address = text.includes(':') ? parseIpv6(text) : parseIpv4(text);
  return address === undefined ? text : address.join('.');
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
