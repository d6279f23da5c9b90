/**
 * The step between send and settle of a delivery attempt whose host name was looked up:
 * the name is asked again, and an answer that may have come from another host than the
 * one checked keeps nothing an admin could read back (a DNS rebinding probe would
 * otherwise see an internal service's answer in the attempt's excerpt).
 */
import type { ReadyDelivery, RefusedDelivery } from './prepare-delivery.ts';
import type { SentDelivery } from './send-delivery.ts';
import { recheckSubscriberHost } from './subscriber-dns.ts';

/**
 * Asks the subscriber's host name again once its request is done (see
 * {@link recheckSubscriberHost}) and decides what the attempt keeps. Never throws.
 *
 * @param ready - the prepared request, with the addresses its check accepted.
 * @param sent - what the attempt got.
 * @param send - the fetch for the DNS-over-HTTPS lookup.
 * @returns `sent` unchanged when no name was looked up or its addresses held; `sent` without
 *   its response excerpt, and a note saying why in its `error`, when the addresses changed or
 *   could not be asked again; a refusal for good (status and excerpt not kept) when the name
 *   now resolves to a refused address.
 */
export async function recheckSentDelivery(
  ready: ReadyDelivery,
  sent: SentDelivery,
  send: typeof fetch,
): Promise<SentDelivery | RefusedDelivery> {
  const host = ready.checkedHost;
  if (host === null) return sent;
  const recheck = await recheckSubscriberHost(host.hostName, host.addresses, {
    resolver: host.resolver,
    allowLoopback: host.allowLoopback,
    fetch: send,
  });
  if (recheck.kind === 'unchanged') return sent;
  const result = sent.sendResult;
  if (recheck.kind === 'refused') {
    return {
      kind: 'refused',
      startedAt: result.startedAt,
      error: `${recheck.error}: the request went out, its answer is not kept`,
      retry: false,
    };
  }
  const note = `response not kept: ${recheck.note}`;
  return {
    ...sent,
    sendResult: {
      ...result,
      responseExcerpt: null,
      error: result.error === null ? note : `${result.error}; ${note}`,
    },
  };
}
