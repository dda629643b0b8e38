// Who is calling, on the wire, as res_pjsip_caller_id does it for Asterisk 22.
//
// In: the caller id of a new inbound channel is the INVITE's P-Asserted-Identity, else its
// Remote-Party-ID, when the endpoint trusts what the far end asserts (`trust_id_inbound`);
// otherwise the endpoint's `callerid`, and From for what that leaves unset (no number: name and
// number from From).
// Out: the INVITE's From carries the outbound channel's connected line (the caller Dial() connects
// it to; an originated channel's own caller id when it has none) on `from_domain` or our address,
// unless `from_user` fixes the user (then From is that user alone, and the global
// `default_from_user` stands in when there is no number to send). `send_pai` / `send_rpid` add
// P-Asserted-Identity (RFC 3325) / Remote-Party-ID with the same identity. Patchbay keeps no
// presentation (every id is "allowed"), so `trust_id_outbound`, which in Asterisk lets restricted
// ids out, changes nothing. A redirected channel's Diversion / History-Info join these headers
// (diversion.ts).
import type { CallerId } from '../../core/channels/channel.ts';
import type { Redirecting } from '../../core/channels/redirecting.ts';
import type { SipRequest } from '../../sip/message.ts';
import { parseNameAddr, type NameAddr, type Uri } from '../../sip/uri.ts';
import { redirectingHeaders } from './diversion.ts';
import { nameAddr, plainSipUri } from './addresses.ts';
import type { PjsipEndpoint } from './config/index.ts';

/** Longest display name or number taken from a peer's header. */
const MAX_ID_PART = 80;

/** The endpoint options that shape the identity of an outbound INVITE. */
export interface OutboundIdentityOptions {
  readonly fromUser?: string;
  readonly fromDomain?: string;
  /** The global default_from_user: the From user when there is no number to send. */
  readonly defaultFromUser: string;
  readonly sendPai: boolean;
  readonly sendRpid: boolean;
  readonly sendDiversion: boolean;
  readonly sendHistoryInfo: boolean;
  /** The endpoint's own caller id (Asterisk's session id): who a 302 without Diversion says redirected the call. */
  readonly self?: Readonly<CallerId>;
}

export function outboundIdentityOptions(endpoint: PjsipEndpoint, defaultFromUser: string): OutboundIdentityOptions {
  return {
    ...(endpoint.fromUser ? { fromUser: endpoint.fromUser } : {}),
    ...(endpoint.fromDomain ? { fromDomain: endpoint.fromDomain } : {}),
    defaultFromUser,
    sendPai: endpoint.sendPai,
    sendRpid: endpoint.sendRpid,
    sendDiversion: endpoint.sendDiversion,
    sendHistoryInfo: endpoint.sendHistoryInfo,
    ...(endpoint.callerId?.number ? { self: { name: endpoint.callerId.name ?? '', number: endpoint.callerId.number } } : {}),
  };
}

/**
 * The From value (with `tag`) and identity headers of an outbound INVITE for caller id `id`, with
 * the Diversion / History-Info of the channel's redirecting party towards `redirect.target`.
 */
export function outboundIdentity(
  options: OutboundIdentityOptions,
  id: CallerId,
  localHost: string,
  tag: string,
  redirect?: { readonly redirecting: Redirecting; readonly target: Uri },
): { from: string; headers: Array<[string, string]> } {
  const host = options.fromDomain ?? localHost;
  const name = cleanPart(id.name);
  const number = cleanPart(id.number);
  const from = options.fromUser
    ? nameAddr(plainSipUri(options.fromUser, host), [['tag', tag]])
    : nameAddr(plainSipUri(number || options.defaultFromUser, host), [['tag', tag]], name);
  const headers: Array<[string, string]> = [];
  // As Asterisk: the identity headers only for an id with a number.
  if (number) {
    const asserted = nameAddr(plainSipUri(number, host), [], name);
    if (options.sendPai) headers.push(['P-Asserted-Identity', asserted]);
    if (options.sendRpid) headers.push(['Remote-Party-ID', nameAddr(plainSipUri(number, host), [['party', 'calling'], ['privacy', 'off'], ['screen', 'no']], name)]);
  }
  if (redirect) headers.push(...redirectingHeaders(options, redirect.redirecting, host, redirect.target));
  return { from, headers };
}

/** The caller id of a new inbound channel from its INVITE and endpoint. */
export function inboundCallerId(request: SipRequest, endpoint: PjsipEndpoint): CallerId {
  if (endpoint.trustIdInbound) {
    const asserted = idFromHeader(request.get('p-asserted-identity')) ?? idFromHeader(request.get('remote-party-id'));
    if (asserted) return asserted;
  }
  const configured = endpoint.callerId;
  const fromHeader = idFromNameAddr(request.from() ?? undefined) ?? { name: '', number: '' };
  if (configured?.number) return { name: configured.name ?? '', number: configured.number };
  return { name: configured?.name ?? fromHeader.name, number: fromHeader.number };
}

function idFromHeader(value: string | undefined): CallerId | undefined {
  if (value === undefined) return undefined;
  // The first identity of a list (PAI may carry a sip: and a tel: one).
  const first = value.split(/,(?=\s*(?:"|<|sip:|sips:|tel:))/)[0] ?? '';
  const parsed = parseNameAddr(first);
  return parsed ? idFromNameAddr(parsed) : undefined;
}

function idFromNameAddr(address: NameAddr | undefined): CallerId | undefined {
  if (!address) return undefined;
  const uri = address.uri;
  // A sip: URI's user, or a tel: URI's number (without its parameters).
  const number = uri.kind === 'sip' ? (uri.user ?? '') : uri.scheme === 'tel' ? (uri.opaque.split(';')[0] ?? '') : '';
  const id = { name: cleanPart(address.displayName ?? ''), number: cleanPart(number) };
  return id.number || id.name ? id : undefined;
}

/** A name or number as it may go into a header or a channel: no control characters, bounded. */
function cleanPart(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f\x7f]/g, '').slice(0, MAX_ID_PART);
}
