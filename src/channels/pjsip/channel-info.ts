// CHANNEL(pjsip,item): chan_pjsip's signalling items that apply to Patchbay's calls. Before the
// dialog exists (an unanswered call) the tags and URIs come from the INVITE. CHANNEL(rtp,…),
// CHANNEL(rtcp,…), CHANNEL(endpoint|aor|contact): its media and session items (sipMediaInfo).
import { rtpQualityStrings } from '../../core/rtp-quality-variables.ts';
import type { RtpStatistics } from '../../media/rtp/statistics.ts';
import type { NegotiatedMedia } from '../../sip/sdp/index.ts';
import type { Dialog } from '../../sip/dialog.ts';
import type { SipRequest } from '../../sip/message.ts';
import { formatUri, type Uri } from '../../sip/uri.ts';

/** What a call knows of its signalling. */
export interface CallSignalling {
  readonly callId: string;
  readonly dialog: Dialog | undefined;
  /** The INVITE that made the call: received (inbound) or sent (outbound, once sent). */
  readonly invite: SipRequest | undefined;
  readonly inbound: boolean;
  /** Where an outbound call goes. */
  readonly target?: Uri;
  /** Our signalling address and the far end's (where its INVITE came from, or where ours went): local_addr, remote_addr. */
  readonly local: { readonly address: string; readonly port: number };
  readonly remote: { readonly address: string; readonly port: number };
}

export function sipChannelInfo(item: string, call: CallSignalling): string | undefined {
  const { dialog, invite, inbound } = call;
  const party = (name: 'from' | 'to'): string => {
    const address = name === 'from' ? invite?.from() : invite?.to();
    return address ? formatUri(address.uri) : '';
  };
  switch (item) {
    case 'call-id':
      return call.callId;
    case 'secure':
      return dialog?.secure ? '1' : '0';
    case 'target_uri': {
      if (dialog) return formatUri(dialog.remoteTarget);
      if (call.target) return formatUri(call.target);
      const contacts = invite?.contacts();
      return contacts && contacts !== 'wildcard' && contacts[0] ? formatUri(contacts[0].uri) : '';
    }
    case 'local_uri':
      return party(inbound ? 'to' : 'from');
    case 'remote_uri':
      return party(inbound ? 'from' : 'to');
    case 'local_tag':
      return dialog?.localTag ?? (inbound ? '' : (invite?.fromTag() ?? ''));
    case 'remote_tag':
      return dialog?.remoteTag ?? (inbound ? (invite?.fromTag() ?? '') : '');
    case 'request_uri':
      return invite ? formatUri(invite.uri) : '';
    case 't38state':
      return 'DISABLED';
    case 'local_addr':
      return hostPort(call.local.address, call.local.port);
    case 'remote_addr':
      return hostPort(call.remote.address, call.remote.port);
    default:
      return undefined;
  }
}

/** What a call knows of its media, for CHANNEL(rtp,…), CHANNEL(rtcp,…) and the session's objects. */
export interface CallMediaFacts {
  readonly endpointId: string;
  /** The AOR and contact an outgoing call to `PJSIP/endpoint` took (Asterisk leaves both empty otherwise). */
  readonly contact: { readonly aor: string; readonly id: string } | undefined;
  /** Our media address as our SDP writes it. */
  readonly mediaAddress: string;
  /** The call's RTP stream: its port and statistics; undefined before it is bound. */
  readonly stream: { readonly localPort: number; statistics(): RtpStatistics | undefined } | undefined;
  readonly negotiated: NegotiatedMedia | undefined;
  readonly heldByFarEnd: boolean;
  /** Where direct media sent the far end's RTP (direct-media.ts); undefined: to us. */
  readonly directTarget?: { readonly address: string; readonly port: number } | undefined;
}

const QUALITY_OF: Readonly<Record<string, string>> = { all: 'RTPAUDIOQOS', all_jitter: 'RTPAUDIOQOSJITTER', all_loss: 'RTPAUDIOQOSLOSS', all_rtt: 'RTPAUDIOQOSRTT', all_mes: 'RTPAUDIOQOSMES' };
/** The counters Asterisk prints as unsigned integers; the other figures are printed with six decimals. */
const WHOLE = new Set(['txcount', 'rxcount', 'txploss', 'rxploss', 'local_ssrc', 'remote_ssrc']);

/** `address:port`, an IPv6 address in brackets, as ast_sockaddr_stringify. */
function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * The items chan_pjsip answers without the `pjsip,` prefix: `endpoint`, `aor`, `contact`,
 * `rtp,type[,audio|video]` (src, dest, direct, secure, hold) and `rtcp,type[,audio|video]` (the
 * RTPAUDIOQOS strings as all, all_jitter, all_loss, all_rtt, all_mes, or one figure). Undefined for
 * anything else, a video stream (Patchbay carries none) or a call without its RTP stream yet.
 */
export function sipMediaInfo(item: string, facts: CallMediaFacts): string | undefined {
  const [param = '', type = '', field = 'audio'] = item.split(',', 3).map((part) => part.trim());
  switch (param) {
    case 'endpoint':
      return facts.endpointId;
    case 'aor':
      return facts.contact?.aor ?? '';
    case 'contact':
      return facts.contact?.id ?? '';
    case 'rtp':
    case 'rtcp':
      if (type === '' || (field !== '' && field !== 'audio')) return undefined;
      return param === 'rtp' ? rtpItem(type, facts) : rtcpItem(type, facts);
    default:
      return undefined;
  }
}

function rtpItem(type: string, facts: CallMediaFacts): string | undefined {
  const { stream, negotiated } = facts;
  if (!stream) return undefined;
  switch (type) {
    case 'src':
      return hostPort(facts.mediaAddress, stream.localPort);
    case 'dest':
      return negotiated?.remoteAddress === undefined ? '' : hostPort(negotiated.remoteAddress, negotiated.remotePort);
    case 'direct':
      // Where direct media sent the far end's RTP (the other leg's far end), empty while it comes here.
      return facts.directTarget ? hostPort(facts.directTarget.address, facts.directTarget.port) : '';
    case 'secure':
      return negotiated?.srtp || negotiated?.security ? '1' : '0';
    case 'hold':
      return facts.heldByFarEnd ? '1' : '0';
    default:
      return undefined;
  }
}

function rtcpItem(type: string, facts: CallMediaFacts): string | undefined {
  const stats = facts.stream?.statistics();
  if (!stats) return undefined;
  const quality = QUALITY_OF[type.toLowerCase()];
  if (quality) return rtpQualityStrings(stats).find(([name]) => name === quality)?.[1];
  const name = type.toLowerCase();
  if (!Object.hasOwn(stats, name)) return undefined;
  const value = (stats as unknown as Record<string, unknown>)[name];
  if (typeof value !== 'number') return undefined;
  return WHOLE.has(name) ? String(Math.trunc(value) >>> 0) : value.toFixed(6);
}
