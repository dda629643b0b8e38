// RFC 3264 offer/answer for one audio stream of G.711, G.722, Opus (RFC 7587) and telephone-event (RFC 4733).
// Builds our offers, answers remote offers and reads answers to our offers; every remote body goes
// through readSdp() first, so hostile SDP yields { ok: false }, never an exception.
//
// Codec choice when answering: by default *our* order (the endpoint's `allow`); `prefer: 'remote'`
// takes the offer's order instead (what the SIP technology asks for by default, see
// codec-preference.ts). The answer lists every common codec in the chosen order (or, with
// `keep: 'first'`, only the first), so the first one is the codec we send; the far end may send any
// of those listed, and NegotiatedMedia.codecs names them all.
import { isIPv6 } from 'node:net';
import { write as writeSdp, type MediaDescription, type SessionDescription } from 'sdp-transform';
import type { OpusSendSettings } from '../../media/opus.ts';
import { OPUS_LOCAL_FMTP, readOpusFmtp } from './opus-fmtp.ts';
import { readSdp, type MediaDirection, type RemoteMedia } from './session.ts';
import { acceptSecurity, answerSecurity, isRtpAudioProfile, offerSecurity, type LocalSdes, type MediaSecurity, type NegotiatedSrtp } from './sdes.ts';
import { answerSetup, isSecureProfile, secureMediaAttributes, secureSessionAttributes, type DtlsSetup, type RemoteSecurity, type SecureLocalMedia } from './webrtc.ts';

export type { MediaDirection } from './session.ts';

/** Audio codecs Patchbay carries over RTP, by Asterisk's `allow` names. */
export type SdpCodec = 'ulaw' | 'alaw' | 'g722' | 'opus';

interface CodecInfo {
  readonly name: SdpCodec;
  readonly encoding: string;
  /** The static payload type, or the dynamic one Asterisk offers (Opus: 107). */
  readonly payloadType: number;
  readonly clockRate: number;
  /** The rtpmap's channel count, when it must be written (Opus: always 2, RFC 7587 §7). */
  readonly channels?: number;
  /** Our fmtp for it, if any. */
  readonly fmtp?: string;
}

export const SDP_CODECS: Readonly<Record<SdpCodec, CodecInfo>> = {
  ulaw: { name: 'ulaw', encoding: 'PCMU', payloadType: 0, clockRate: 8000 },
  alaw: { name: 'alaw', encoding: 'PCMA', payloadType: 8, clockRate: 8000 },
  // RFC 3551 §4.5.2: 16 kHz audio, but a clock of 8000 for historical reasons.
  g722: { name: 'g722', encoding: 'G722', payloadType: 9, clockRate: 8000 },
  opus: { name: 'opus', encoding: 'opus', payloadType: 107, clockRate: 48000, channels: 2, fmtp: OPUS_LOCAL_FMTP },
};

export function isSdpCodec(name: string): name is SdpCodec {
  return name === 'ulaw' || name === 'alaw' || name === 'g722' || name === 'opus';
}

export const DEFAULT_TELEPHONE_EVENT_PT = 101;
/**
 * telephone-event at Opus's 48 kHz clock, offered beside Opus as Asterisk 18+ does (RFC 4733 §2.1:
 * events count on the clock of the audio they ride with); 102 when the 8 kHz events took 100.
 */
export const WIDEBAND_TELEPHONE_EVENT_PT = 100;
export const DEFAULT_PTIME = 20;

export interface LocalMedia {
  /** Our RTP address (c= and o=), IPv4 or IPv6. */
  readonly address: string;
  /** Our RTP port; RTCP is port + 1. */
  readonly port: number;
  /** Codecs in preference order (the endpoint's resolved `allow`). */
  readonly codecs: readonly SdpCodec[];
  /** Offer telephone-event with this payload type (96..127); false for none. Default 101. */
  readonly telephoneEvent?: number | false;
  /** The direction we want. Default sendrecv. */
  readonly direction?: MediaDirection;
  /** Default 20. */
  readonly ptime?: number;
  /** o= session id and version: keep the id and raise the version for every new body of a dialog. */
  readonly sessionId?: string;
  readonly sessionVersion?: number;
  /** o= user name and s= line. Default "Patchbay". */
  readonly userAgent?: string;
  /** The o= user name when not userAgent's (endpoint `sdp_owner`): no spaces, RFC 8866 §5.2. */
  readonly owner?: string;
  /** The s= line when not userAgent's (endpoint `sdp_session`). */
  readonly sessionName?: string;
  /**
   * The a=ptime of an answer: the offer's (`offer`, endpoint `use_ptime=yes`) or our own `ptime`
   * (`local`, as res_pjsip_sdp_rtp writes its framing when use_ptime is off). Default 'offer'.
   */
  readonly answerPtime?: 'offer' | 'local';
  /** Whose order wins when answering. Default 'local'. */
  readonly prefer?: 'local' | 'remote';
  /** When answering, list every common codec (default) or only the first in the chosen order. */
  readonly keep?: 'all' | 'first';
  /** Offer RTCP multiplexed on the RTP port, and accept it when offered (RFC 5761). Default false. */
  readonly rtcpMux?: boolean;
  /** SDES-SRTP (sdes.ts): our keys and whether plain RTP stays acceptable; absent: RTP only. */
  readonly sdes?: LocalSdes;
  /** WebRTC media (webrtc.ts: ICE, DTLS-SRTP, BUNDLE, rtcp-mux): only UDP/TLS/RTP/SAVP(F) audio is accepted then. */
  readonly secure?: SecureLocalMedia;
  /** No a=rtpmap for the static payload types (0–34, RFC 3551), as pjsip's compact form writes SDP. */
  readonly omitStaticRtpmap?: boolean;
}

/** What a completed offer/answer agreed, from our point of view. */
export interface NegotiatedMedia {
  /** Where to send RTP; undefined when the far end gave no usable address (missing c=, host name, or 0.0.0.0 hold). */
  readonly remoteAddress?: string;
  readonly remotePort: number;
  /** From a=rtcp, else remotePort + 1. */
  readonly remoteRtcpPort: number;
  readonly codec: SdpCodec;
  /** The payload type of `codec` in the far end's SDP (what we send and expect). */
  readonly payloadType: number;
  readonly clockRate: number;
  /** The far end's telephone-event payload type, when both sides have it. */
  readonly telephoneEventPt?: number;
  /** Its clock when not 8000: the codec's own (48000 beside Opus), when the far end has events on it. */
  readonly telephoneEventRate?: number;
  /** Our direction: whether we send, receive, both or neither. */
  readonly direction: MediaDirection;
  /** Milliseconds of audio per packet the far end asked for (a=ptime), else 20. */
  readonly ptime: number;
  /** Every common codec with the far end's payload type, preferred first. */
  readonly codecs: ReadonlyArray<{ readonly codec: SdpCodec; readonly payloadType: number }>;
  /** What the far end's fmtp asks of the Opus we send (when Opus is common). */
  readonly opus?: OpusSendSettings;
  /** Index of the m= line carrying the stream. */
  readonly mediaIndex: number;
  /** Both sides agreed to RTCP on the RTP port (RFC 5761): remoteRtcpPort is then remotePort. */
  readonly rtcpMux: boolean;
  /** The SRTP keys agreed (SDES); absent: the media is plain RTP. */
  readonly srtp?: NegotiatedSrtp;
  /** WebRTC: the far end's ICE and DTLS attributes and our setup (the keys come from the DTLS handshake). */
  readonly security?: { readonly remote: RemoteSecurity; readonly setup: DtlsSetup };
}

export type AnswerResult =
  | { readonly ok: true; readonly sdp: string; readonly media: NegotiatedMedia }
  /** 488 Not Acceptable Here (nothing in common) or 400 (unusable body). */
  | { readonly ok: false; readonly status: 400 | 488; readonly reason: string };

export type AcceptResult = { readonly ok: true; readonly media: NegotiatedMedia } | { readonly ok: false; readonly reason: string };

const SEND = 1;
const RECV = 2;
const BITS: Record<MediaDirection, number> = { sendrecv: SEND | RECV, sendonly: SEND, recvonly: RECV, inactive: 0 };

function directionOf(bits: number): MediaDirection {
  return bits === (SEND | RECV) ? 'sendrecv' : bits === SEND ? 'sendonly' : bits === RECV ? 'recvonly' : 'inactive';
}

/** Our direction in an answer: we send only if they receive, receive only if they send (RFC 3264 §6.1). */
export function answerDirection(offered: MediaDirection, wanted: MediaDirection = 'sendrecv'): MediaDirection {
  const remote = BITS[offered];
  const mirrored = (remote & SEND ? RECV : 0) | (remote & RECV ? SEND : 0);
  return directionOf(mirrored & BITS[wanted]);
}

function telephoneEventPt(local: LocalMedia): number | undefined {
  const pt = local.telephoneEvent === undefined ? DEFAULT_TELEPHONE_EVENT_PT : local.telephoneEvent;
  return pt !== false && Number.isInteger(pt) && pt >= 96 && pt <= 127 ? pt : undefined;
}

/** A telephone-event format: its payload type and clock. */
interface TelephoneEvent {
  readonly payloadType: number;
  readonly rate: number;
}

/** The telephone-events we offer: at 8000, and at 48000 too when Opus is offered. */
function offeredEvents(local: LocalMedia, codecs: readonly SdpCodec[]): TelephoneEvent[] {
  const pt = telephoneEventPt(local);
  if (pt === undefined) return [];
  const events = [{ payloadType: pt, rate: 8000 }];
  if (codecs.includes('opus')) events.push({ payloadType: pt === WIDEBAND_TELEPHONE_EVENT_PT ? 102 : WIDEBAND_TELEPHONE_EVENT_PT, rate: 48000 });
  return events;
}

function validPort(port: number): boolean {
  return Number.isInteger(port) && port > 0 && port <= 65535;
}

function orderedCodecs(codecs: readonly SdpCodec[]): SdpCodec[] {
  return [...new Set(codecs.filter(isSdpCodec))];
}

function sessionOf(local: LocalMedia, media: MediaDescription[], bundled?: string): SessionDescription {
  const ipVer = isIPv6(local.address) ? 6 : 4;
  const name = (local.userAgent ?? 'Patchbay').replace(/[^\x21-\x7e]/g, '') || 'Patchbay';
  // o= names no spaces; s= is text (a lone space when empty, RFC 8866 §5.3). Config already refused control characters.
  const owner = local.owner === undefined ? name : local.owner.replace(/[^\x21-\x7e]/g, '') || '-';
  const sessionName = local.sessionName === undefined ? name : local.sessionName.replace(/[^\x20-\x7e]/g, '') || ' ';
  const sessionId = /^\d{1,20}$/.test(local.sessionId ?? '') ? (local.sessionId as string) : String(Math.floor(Math.random() * 2 ** 31));
  const version = Number.isSafeInteger(local.sessionVersion) && (local.sessionVersion as number) >= 0 ? (local.sessionVersion as number) : 1;
  return {
    version: 0,
    origin: { username: owner, sessionId, sessionVersion: version, netType: 'IN', ipVer, address: local.address },
    name: sessionName,
    timing: { start: 0, stop: 0 },
    connection: { version: ipVer, ip: local.address },
    ...(local.secure && bundled !== undefined ? secureSessionAttributes(bundled) : {}),
    media,
  };
}

/** The last payload type RFC 3551 assigns statically (its rtpmap may be left out). */
const LAST_STATIC_PAYLOAD_TYPE = 34;

function audioMedia(
  local: LocalMedia,
  codecs: ReadonlyArray<{ codec: SdpCodec; payloadType: number }>,
  events: readonly TelephoneEvent[],
  direction: MediaDirection,
  ptime: number,
  mux: 'offer' | 'answer' | 'none',
  security: MediaSecurity = { protocol: 'RTP/AVP' },
  secured?: { readonly setup: DtlsSetup; readonly mid: string },
): MediaDescription {
  const rtp: MediaDescription['rtp'] = codecs.map(({ codec, payloadType }) => {
    const { encoding, clockRate, channels } = SDP_CODECS[codec];
    return { payload: payloadType, codec: encoding, rate: clockRate, ...(channels === undefined ? {} : { encoding: channels }) };
  });
  const fmtp: MediaDescription['fmtp'] = codecs.flatMap(({ codec, payloadType }) => {
    const config = SDP_CODECS[codec].fmtp;
    return config === undefined ? [] : [{ payload: payloadType, config }];
  });
  for (const { payloadType, rate } of events) {
    rtp.push({ payload: payloadType, codec: 'telephone-event', rate });
    fmtp.push({ payload: payloadType, config: '0-16' });
  }
  // RTCP goes to the port above RTP (said explicitly, RFC 3605), or to the RTP port itself once
  // multiplexing is agreed; an offer of multiplexing keeps the separate port as the fallback.
  const rtcpPort = mux === 'answer' ? local.port : Math.min(local.port + 1, 65535);
  return {
    type: 'audio',
    port: local.port,
    protocol: security.protocol,
    payloads: rtp.map((entry) => entry.payload).join(' '),
    rtp: local.omitStaticRtpmap === true ? rtp.filter((entry) => entry.payload > LAST_STATIC_PAYLOAD_TYPE) : rtp,
    fmtp,
    ptime,
    direction,
    rtcp: { port: rtcpPort },
    ...(mux === 'none' ? {} : { rtcpMux: 'rtcp-mux' }),
    ...(security.crypto ? { crypto: security.crypto } : {}),
    ...(local.secure && secured ? secureMediaAttributes(local.secure, secured.setup, secured.mid) : {}),
  };
}

/** Our offer: one audio stream with `codecs` in order, telephone-event, ptime and direction. */
export function buildOffer(local: LocalMedia): string {
  const ordered = orderedCodecs(local.codecs);
  const codecs = ordered.map((codec) => ({ codec, payloadType: SDP_CODECS[codec].payloadType }));
  const ptime = local.ptime ?? DEFAULT_PTIME;
  const security = offerSecurity(local.sdes);
  const secured = local.secure ? { setup: local.secure.setup, mid: '0' } : undefined;
  const mux = local.rtcpMux || secured ? 'offer' : 'none';
  return writeSdp(sessionOf(local, [audioMedia(local, codecs, offeredEvents(local, ordered), local.direction ?? 'sendrecv', ptime, mux, security, secured)], secured?.mid));
}

/** The codec of a payload type in a remote m= line: its rtpmap, else the static assignment. */
function codecOfPayload(media: RemoteMedia, pt: number): SdpCodec | undefined {
  const map = media.rtpmap.get(pt);
  if (map) {
    const encoding = map.encoding.toUpperCase();
    // Opus is always opus/48000/2 whether mono or stereo is sent (RFC 7587 §7); a missing channel count is forgiven.
    if (encoding === 'OPUS') return map.clockRate === 48000 && (map.channels === undefined || map.channels === 2) ? 'opus' : undefined;
    if (map.clockRate !== 8000 || (map.channels !== undefined && map.channels !== 1)) return undefined;
    return encoding === 'PCMU' ? 'ulaw' : encoding === 'PCMA' ? 'alaw' : encoding === 'G722' ? 'g722' : undefined;
  }
  return pt === 0 ? 'ulaw' : pt === 8 ? 'alaw' : pt === 9 ? 'g722' : undefined;
}

/**
 * The far end's telephone-event to use with a codec of clock `clockRate`: one on that clock (RFC
 * 4733 §2.1; 48000 beside Opus), else one on 8000, the clock every endpoint knows.
 */
function remoteTelephoneEvent(media: RemoteMedia, clockRate: number): TelephoneEvent | undefined {
  let fallback: TelephoneEvent | undefined;
  for (const pt of media.formats) {
    const map = media.rtpmap.get(pt);
    if (!map || map.encoding.toLowerCase() !== 'telephone-event') continue;
    if (map.clockRate === clockRate) return { payloadType: pt, rate: clockRate };
    if (map.clockRate === 8000) fallback ??= { payloadType: pt, rate: 8000 };
  }
  return fallback;
}

/** Common codecs with the remote payload types, in the preferred order. */
function commonCodecs(media: RemoteMedia, ours: readonly SdpCodec[], prefer: 'local' | 'remote'): Array<{ codec: SdpCodec; payloadType: number }> {
  const remote: Array<{ codec: SdpCodec; payloadType: number }> = [];
  for (const pt of media.formats) {
    const codec = codecOfPayload(media, pt);
    if (codec && ours.includes(codec) && !remote.some((entry) => entry.codec === codec)) remote.push({ codec, payloadType: pt });
  }
  if (prefer === 'remote') return remote;
  return ours.flatMap((codec) => remote.filter((entry) => entry.codec === codec));
}

/** An RTP/AVP or RTP/SAVP audio line; with WebRTC media, a DTLS one (UDP/TLS/RTP/SAVP or SAVPF; RTP/SAVP(F) too with force_avp). */
function usableAudio(media: RemoteMedia, secure?: SecureLocalMedia): boolean {
  return media.type === 'audio' && media.port !== 0 && (secure ? isSecureProfile(media.protocol, secure.forceAvp) : isRtpAudioProfile(media.protocol));
}

function negotiated(
  media: RemoteMedia,
  codecs: ReadonlyArray<{ codec: SdpCodec; payloadType: number }>,
  event: TelephoneEvent | undefined,
  direction: MediaDirection,
  rtcpMux: boolean,
  srtp?: NegotiatedSrtp,
  setup?: DtlsSetup,
): NegotiatedMedia {
  const [first] = codecs;
  const opus = codecs.find((entry) => entry.codec === 'opus');
  return {
    ...(srtp ? { srtp } : {}),
    ...(opus ? { opus: readOpusFmtp(media.fmtp.get(opus.payloadType)) } : {}),
    ...(setup === undefined ? {} : { security: { remote: media.security, setup } }),
    ...(media.address !== undefined && !media.nullAddress ? { remoteAddress: media.address } : {}),
    remotePort: media.port,
    remoteRtcpPort: rtcpMux ? media.port : (media.rtcpPort ?? Math.min(media.port + 1, 65535)),
    rtcpMux,
    codec: first.codec,
    payloadType: first.payloadType,
    clockRate: SDP_CODECS[first.codec].clockRate,
    ...(event === undefined ? {} : { telephoneEventPt: event.payloadType }),
    ...(event === undefined || event.rate === 8000 ? {} : { telephoneEventRate: event.rate }),
    direction,
    ptime: media.ptime ?? DEFAULT_PTIME,
    codecs,
    mediaIndex: media.index,
  };
}

/**
 * Answers a remote offer. The first RTP/AVP audio line with a codec in common is accepted; every
 * other line is refused with port 0, as RFC 3264 §6 requires. A 0.0.0.0 connection address (old-style
 * hold) answers but leaves remoteAddress undefined.
 */
export function answerOffer(offer: string | Uint8Array | undefined, local: LocalMedia): AnswerResult {
  if (!validPort(local.port)) return { ok: false, status: 488, reason: 'no local RTP port' };
  const read = readSdp(offer);
  if (!read.ok) return { ok: false, status: 400, reason: read.reason };
  const ours = orderedCodecs(local.codecs);
  const prefer = local.prefer ?? 'local';
  const ourEventPt = telephoneEventPt(local);

  let chosen: NegotiatedMedia | undefined;
  let refusal: string | undefined;
  let bundled: string | undefined;
  const lines: MediaDescription[] = [];
  for (const media of read.session.media) {
    if (!chosen && usableAudio(media, local.secure)) {
      const common = commonCodecs(media, ours, prefer);
      const codecs = local.keep === 'first' ? common.slice(0, 1) : common;
      // The transport must suit the endpoint's media_encryption (sdes.ts), else the line is refused.
      // WebRTC's keys come from DTLS: the line needs no SDES decision (its profile was checked above).
      const security = codecs.length === 0 ? undefined : local.secure ? ({ ok: true, security: { protocol: media.protocol } } as const) : answerSecurity(media, local.sdes);
      if (security && !security.ok) refusal ??= security.reason;
      if (security?.ok) {
        const event = ourEventPt === undefined ? undefined : remoteTelephoneEvent(media, SDP_CODECS[codecs[0].codec].clockRate);
        const direction = answerDirection(media.direction, local.direction ?? 'sendrecv');
        // use_ptime: the offer's ptime when it gave one; else ours, as Asterisk writes its own framing.
        const ptime = (local.answerPtime ?? 'offer') === 'offer' ? (media.ptime ?? local.ptime ?? DEFAULT_PTIME) : (local.ptime ?? DEFAULT_PTIME);
        // WebRTC: RTCP always on the one bundled port (browsers require it).
        const mux = (local.rtcpMux === true || local.secure !== undefined) && media.rtcpMux;
        const secured = local.secure ? { setup: answerSetup(media.security.setup, local.secure.setup), mid: media.security.mid ?? String(media.index) } : undefined;
        bundled = secured?.mid;
        const srtp = 'srtp' in security ? security.srtp : undefined;
        chosen = negotiated(media, codecs, event, direction, mux, srtp, secured?.setup);
        lines.push(audioMedia(local, codecs, event ? [event] : [], direction, ptime, mux ? 'answer' : 'none', security.security, secured));
        continue;
      }
    }
    lines.push(rejected(media));
  }
  if (!chosen) return { ok: false, status: 488, reason: refusal ?? 'no audio stream with a codec in common' };
  return { ok: true, sdp: writeSdp(sessionOf(local, lines, bundled)), media: chosen };
}

function rejected(media: RemoteMedia): MediaDescription {
  // Keep the offered type, protocol and first format so the line still parses (RFC 3264 §6).
  const type = /^[a-z0-9_-]{1,32}$/.test(media.type) ? media.type : 'audio';
  const protocol = /^[A-Za-z0-9/_.-]{1,64}$/.test(media.protocol) ? media.protocol : 'RTP/AVP';
  const format = /^[A-Za-z0-9_.*-]{1,64}$/.test(media.rawFormats[0] ?? '') ? media.rawFormats[0] : '0';
  // A refused line keeps its mid (a browser's video next to bundled audio): JSEP matches lines by it.
  return { type, port: 0, protocol, payloads: format, rtp: [], fmtp: [], ...(media.security.mid === undefined ? {} : { mid: media.security.mid }) };
}

/**
 * Reads the answer to an offer we built with `offered`. The far end chooses: the first payload type
 * of its audio line that we offered is the codec in use.
 */
export function acceptAnswer(answer: string | Uint8Array | undefined, offered: LocalMedia): AcceptResult {
  const read = readSdp(answer);
  if (!read.ok) return { ok: false, reason: read.reason };
  // We offer exactly one m= line, so the answer must have exactly one (RFC 3264 §6).
  if (read.session.media.length !== 1) return { ok: false, reason: 'answer does not have one m= line for our one offered line' };
  const [media] = read.session.media;
  if (!usableAudio(media, offered.secure)) return { ok: false, reason: 'audio stream refused' };
  const codecs = commonCodecs(media, orderedCodecs(offered.codecs), 'remote');
  if (codecs.length === 0) return { ok: false, reason: 'answer chose no codec we offered' };
  const security = acceptSecurity(media, offered.sdes);
  if (!security.ok) return security;
  // Only a clock we offered: 48000 went with Opus only.
  const offeredRates = offeredEvents(offered, orderedCodecs(offered.codecs)).map((entry) => entry.rate);
  const event = remoteTelephoneEvent(media, SDP_CODECS[codecs[0].codec].clockRate);
  const eventOk = event !== undefined && offeredRates.includes(event.rate);
  // The answer's direction is theirs; ours is its mirror, limited to what we offered.
  const direction = answerDirection(media.direction, offered.direction ?? 'sendrecv');
  const mux = (offered.rtcpMux === true || offered.secure !== undefined) && media.rtcpMux;
  return { ok: true, media: negotiated(media, codecs, eventOk ? event : undefined, direction, mux, security.srtp, offered.secure?.setup) };
}
