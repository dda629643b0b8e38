/**
 * NAT helpers at the protocol level (Asterisk's `rewrite_contact` and `force_rport`, RFC 3581).
 * A phone behind NAT writes its private address in Contact; the address its packets come from
 * is the only one that reaches it. Rewriting the Contact of a received message to that source
 * address makes everything built from it — registrar bindings, a dialog's remote target — point
 * there. Pure functions on parsed messages: the caller decides when (per endpoint).
 */
import { formatNameAddr, formatUri, type SipUri } from './uri.ts';
import { splitList, type SipMessage } from './message.ts';
import type { Source } from './transport.ts';

/**
 * `uri` with the source's address and port as host and port, and the transport it arrived on
 * (`;transport=tcp` for TCP, none for UDP, the default). maddr would send elsewhere: dropped.
 */
export function uriAtSource(uri: SipUri, source: Source): SipUri {
  const params = new Map(uri.params);
  params.delete('maddr');
  if (source.transport === 'UDP') params.delete('transport');
  else params.set('transport', source.transport.toLowerCase());
  return { ...uri, host: source.address.replace(/^\[|\]$/g, '').toLowerCase(), port: source.port, params, headers: new Map(uri.headers) };
}

/**
 * Rewrites the first Contact of `message` (a SIP or SIPS URI) to the source it came from, in
 * place, keeping its display name and header parameters (expires, q …). Returns the Contact URI
 * as the peer wrote it (what a registrar echoes back), or undefined when there was nothing to
 * rewrite (no Contact, `*`, another scheme).
 */
export function rewriteContactToSource(message: SipMessage, source: Source): string | undefined {
  const contacts = message.contacts();
  if (contacts === 'wildcard' || contacts.length === 0) return undefined;
  const first = contacts[0];
  if (first.uri.kind !== 'sip') return undefined;
  const rewritten = formatNameAddr({ ...(first.displayName !== undefined ? { displayName: first.displayName } : {}), uri: uriAtSource(first.uri, source), params: first.params });
  // In place, so that the headers keep their order (PJSIP_HEADER reads them by position).
  const index = message.headers.findIndex((header) => header.key === 'contact');
  const line = message.headers[index];
  message.headers[index] = { ...line, value: [rewritten, ...splitList(line.value).slice(1)].join(', ') };
  return formatUri(first.uri);
}
