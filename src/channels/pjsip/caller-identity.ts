// Who is calling, on the wire, as res_pjsip_caller_id does it for Asterisk 22.
//
// In: the caller id of a new inbound channel is the INVITE's P-Asserted-Identity (restricted when
// a Privacy header other than `none` comes with it), else its Remote-Party-ID (restricted by
// `privacy=full`, screened by `screen=yes`), when the endpoint trusts what the far end asserts
// (`trust_id_inbound`); otherwise the endpoint's `callerid` with the presentation of its
// `callerid_privacy`, and From for what that leaves unset (no number: name and number from From,
// an anonymous From read as it is written, as Asterisk does).
// Out: the INVITE's From carries the outbound channel's connected line (the caller Dial() connects
// it to; an originated channel's own caller id when it has none) on `from_domain` or our address,
// unless `from_user` fixes the user (then From is that user alone, and the global
// `default_from_user` stands in when there is no number to send). A restricted party (prohibited
// or unavailable) goes out as `"Anonymous" <sip:anonymous@anonymous.invalid>` (`from_user` and
// `from_domain` still win, as res_pjsip_session's set_from_header). `send_pai` / `send_rpid` add
// P-Asserted-Identity (RFC 3325, with `Privacy: id` for a restricted party) / Remote-Party-ID
// (`privacy=full|off`, `screen=yes|no`) with the real identity: for a restricted party only with
// `trust_id_outbound`. A redirected channel's Diversion / History-Info join these headers
// (diversion.ts).
import type { CallerId } from '../../core/channels/channel.ts';
import {
  bothPresentation, isRestricted, passedScreen, PRES_ALLOWED_NOT_SCREENED, PRES_PASSED_SCREEN, PRES_PROHIB_NOT_SCREENED, PRESENTATION_ALLOWED,
  type PartyPresentation,
} from '../../core/channels/presentation.ts';
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
  /** Send a restricted party's identity headers too (its From stays anonymous). */
  readonly trustIdOutbound: boolean;
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
    trustIdOutbound: endpoint.trustIdOutbound,
    sendDiversion: endpoint.sendDiversion,
    sendHistoryInfo: endpoint.sendHistoryInfo,
    ...(endpoint.callerId?.number ? { self: { name: endpoint.callerId.name ?? '', number: endpoint.callerId.number } } : {}),
  };
}

/** The From of a restricted party (res_pjsip_session's set_from_header). */
const ANONYMOUS_NAME = 'Anonymous';
const ANONYMOUS_USER = 'anonymous';
const ANONYMOUS_HOST = 'anonymous.invalid';

/**
 * The From value (with `tag`) and identity headers of an outbound INVITE for party `id` shown
 * with `presentation` (presentation.ts), with the Diversion / History-Info of the channel's
 * redirecting party towards `redirect.target`.
 */
export function outboundIdentity(
  options: OutboundIdentityOptions,
  id: CallerId,
  localHost: string,
  tag: string,
  redirect?: { readonly redirecting: Redirecting; readonly target: Uri },
  presentation: PartyPresentation = PRESENTATION_ALLOWED,
): { from: string; headers: Array<[string, string]> } {
  const host = options.fromDomain ?? localHost;
  const name = cleanPart(id.name);
  const number = cleanPart(id.number);
  let from: string;
  if (isRestricted(presentation)) {
    // from_user and from_domain win over the anonymous user and host; the name is always Anonymous.
    from = nameAddr(plainSipUri(options.fromUser ?? ANONYMOUS_USER, options.fromDomain ?? ANONYMOUS_HOST), [['tag', tag]], ANONYMOUS_NAME);
  } else {
    from = options.fromUser
      ? nameAddr(plainSipUri(options.fromUser, host), [['tag', tag]])
      : nameAddr(plainSipUri(number || options.defaultFromUser, host), [['tag', tag]], name);
  }
  const headers = identityHeaders(options, id, presentation, host);
  if (redirect) headers.push(...redirectingHeaders(options, redirect.redirecting, host, redirect.target));
  return { from, headers };
}

/**
 * P-Asserted-Identity (with `Privacy: id` when restricted) and Remote-Party-ID for party `id`
 * shown with `presentation`, on `host`, as the endpoint's `send_pai` / `send_rpid` ask: none for
 * a party without a number, nor for a restricted one unless the endpoint has `trust_id_outbound`
 * (ast_sip_can_present_connected_id). The identity headers of any request or response that
 * carries a party (an INVITE, a connected-line update).
 */
export function identityHeaders(options: OutboundIdentityOptions, id: CallerId, presentation: PartyPresentation, host: string): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const number = cleanPart(id.number);
  if (!number) return headers;
  const restricted = isRestricted(presentation);
  if (restricted && !options.trustIdOutbound) return headers;
  const name = cleanPart(id.name);
  if (options.sendPai) {
    headers.push(['P-Asserted-Identity', nameAddr(plainSipUri(number, host), [], name)]);
    if (restricted) headers.push(['Privacy', 'id']);
  }
  if (options.sendRpid) {
    const params: Array<[string, string]> = [['party', 'calling'], ['privacy', restricted ? 'full' : 'off'], ['screen', passedScreen(presentation) ? 'yes' : 'no']];
    headers.push(['Remote-Party-ID', nameAddr(plainSipUri(number, host), params, name)]);
  }
  return headers;
}

/** A new inbound channel's caller id and its presentation. */
export interface InboundCaller {
  readonly id: CallerId;
  readonly presentation: PartyPresentation;
}

/** The caller id of a new inbound channel from its INVITE and endpoint (ast_sip_set_id_from_invite). */
export function inboundCaller(request: SipRequest, endpoint: PjsipEndpoint): InboundCaller {
  if (endpoint.trustIdInbound) {
    const asserted = assertedByPai(request) ?? assertedByRpid(request);
    if (asserted) return asserted;
  }
  const presentation = bothPresentation(endpoint.callerIdPrivacy);
  const configured = endpoint.callerId;
  if (configured?.number) return { id: { name: configured.name ?? '', number: configured.number }, presentation };
  const fromHeader = idFromNameAddr(request.from() ?? undefined) ?? { name: '', number: '' };
  return { id: { name: configured?.name ?? fromHeader.name, number: fromHeader.number }, presentation };
}

/** P-Asserted-Identity with a number: restricted by any Privacy value but `none`. */
function assertedByPai(request: SipRequest): InboundCaller | undefined {
  const id = idFromHeader(request.get('p-asserted-identity'))?.id;
  if (!id?.number) return undefined;
  const privacy = request.get('privacy')?.trim().toLowerCase();
  const restricted = privacy !== undefined && privacy !== 'none';
  return { id, presentation: bothPresentation(restricted ? PRES_PROHIB_NOT_SCREENED : PRES_ALLOWED_NOT_SCREENED) };
}

/** Remote-Party-ID with a number: `privacy=full` restricts it, `screen=yes` says it passed screening. */
function assertedByRpid(request: SipRequest): InboundCaller | undefined {
  const parsed = idFromHeader(request.get('remote-party-id'));
  if (!parsed?.id.number) return undefined;
  const privacy = parsed.params.get('privacy')?.toLowerCase() === 'full' ? PRES_PROHIB_NOT_SCREENED : PRES_ALLOWED_NOT_SCREENED;
  const screen = parsed.params.get('screen')?.toLowerCase() === 'yes' ? PRES_PASSED_SCREEN : 0;
  return { id: parsed.id, presentation: bothPresentation(privacy | screen) };
}

function idFromHeader(value: string | undefined): { id: CallerId; params: ReadonlyMap<string, string | null> } | undefined {
  if (value === undefined) return undefined;
  // The first identity of a list (PAI may carry a sip: and a tel: one).
  const first = value.split(/,(?=\s*(?:"|<|sip:|sips:|tel:))/)[0] ?? '';
  const parsed = parseNameAddr(first);
  const id = parsed ? idFromNameAddr(parsed) : undefined;
  return parsed && id ? { id, params: parsed.params } : undefined;
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
