// The SDP side of one SIP call: our session description (its o= id and version), the offers and
// answers we make with the endpoint's codecs and preferences (incoming/outgoing_call_offer_pref), the
// answers we take, and the call's RTP stream configured with whatever was agreed — every codec the
// answer lists is decoded, the first is sent (Opus shaped by the far end's fmtp). With
// media_encryption=sdes the call has its own SRTP master keys (one per suite, made once: re-INVITEs
// repeat them, as chan_pjsip keeps its key) and the stream gets an SrtpSession keyed by what
// offer/answer agreed.
import { randomBytes } from 'node:crypto';
import type { CallRtpStream } from '../../media/rtp/call-stream.ts';
import { SrtpSession } from '../../media/srtp/session.ts';
import { MASTER_KEY_SALT_BYTES, type SrtpMasterKey } from '../../media/srtp/suites.ts';
import {
  acceptAnswer,
  answerOffer,
  buildOffer,
  DEFAULT_ANSWER_PREFERENCE,
  DEFAULT_OFFER_PREFERENCE,
  offerCodecs,
  type CodecPreference,
  type LocalMedia,
  type LocalSdes,
  type MediaDirection,
  type NegotiatedMedia,
  type SdpCodec,
} from '../../sip/sdp/index.ts';
import type { DtmfMode, MediaEncryption } from './config/types.ts';
import { SecureMediaSocket } from '../../media/webrtc/secure-media-socket.ts';
import { RemoteRtpStream } from '../../media/workers/remote-stream.ts';
import type { RemoteSecureMedia } from '../../media/workers/remote-secure-media.ts';
import { dtlsRole, type SecureLocalMedia } from '../../sip/sdp/webrtc.ts';
import { dtmfInband } from './dtmf-info.ts';
import { OfferExchange } from '../../sip/sdp/offer-exchange.ts';
import type { SipResponse } from '../../sip/message.ts';
import { sessionDescriptionOf } from '../../sip/multipart.ts';
import { DEFAULT_EARLY_ANSWER_OPTIONS, EarlyAnswers, type EarlyAnswerOptions } from './early-answers.ts';
import type { DirectTarget } from './direct-media.ts';

/** The endpoint options that shape the SDP (a PjsipEndpoint has them). */
export interface SdpOptions {
  readonly dtmfMode: DtmfMode;
  /** Accept and offer RTCP multiplexed on the RTP port (endpoint `rtcp_mux`). */
  readonly rtcpMux: boolean;
  /** How the answer to an offer orders and keeps codecs (incoming_call_offer_pref); default: the offer's order, all common ones. */
  readonly incomingOfferPref?: CodecPreference;
  /** How our offer orders the calling side's codecs and ours (outgoing_call_offer_pref); default: theirs first, all of ours. */
  readonly outgoingOfferPref?: CodecPreference;
  /** Endpoint `media_encryption` (default no). `dtls` is the hook for DTLS-SRTP (WebRTC): plain RTP until it lands. */
  readonly mediaEncryption?: MediaEncryption;
  /** Endpoint `media_encryption_optimistic`. */
  readonly mediaEncryptionOptimistic?: boolean;
  /** Endpoint `srtp_tag_32`: the 32-bit tag suite offered first. */
  readonly srtpTag32?: boolean;
  /** WebRTC media (webrtc-options.ts): the SDP says so when the stream's socket is a SecureMediaSocket. */
  readonly useAvpf?: boolean;
  readonly dtlsSetup?: 'actpass' | 'active' | 'passive';
  /** No a=rtpmap for static payload types (the system's compact_headers, as Asterisk writes its SDP then). */
  readonly omitStaticRtpmap?: boolean;
  /** Endpoint `rtp_keepalive`: seconds of nothing sent before a comfort-noise packet goes (0 or absent: none). */
  readonly rtpKeepalive?: number;
  /** Endpoint `sdp_owner` and `sdp_session`: our o= user and s= line (absent: Patchbay's name for both). */
  readonly sdpOwner?: string;
  readonly sdpSession?: string;
  /** Endpoint `use_ptime`: the answer carries the offer's a=ptime; else our own. */
  readonly usePtime?: boolean;
  /** Endpoint `force_avp`: WebRTC lines named RTP/SAVP(F). */
  readonly forceAvp?: boolean;
}

/**
 * How long media may go unanswered to the far end's address: limited (to `limitMs`, 0 = never) when
 * it is another address than the one the call's signalling is with — legitimate behind some NATs and
 * media relays, but also how an SDP would aim our RTP at a third party (sip.rtp_unanswered_ms).
 */
export function unansweredLimitFor(address: string | undefined, signalling: string, limitMs: number): number | undefined {
  return address === undefined || limitMs <= 0 || address === signalling ? undefined : limitMs;
}

export class CallMedia {
  /** The offer/answer exchange still open, if any: an UPDATE's offer meanwhile is refused (offer-exchange.ts). */
  readonly exchange = new OfferExchange();
  #negotiated: NegotiatedMedia | undefined;
  #localSdp: string | undefined;
  /** Our SDP in force before an offer of ours still unanswered: what a refused offer leaves (RFC 3261 §14.1). */
  #beforeOffer: string | undefined;
  #version = 1;
  /** Which response to our INVITE set the answer in force, and whether a later one may replace it (early-answers.ts). */
  readonly #answers: EarlyAnswers;
  /** An 18x to our INVITE brought the media before the call was answered. */
  #earlyAnswered = false;
  readonly #sessionId = String(Math.floor(Math.random() * 1e9));
  /** Our SDES keys (media_encryption=sdes), made at the first offer or answer. */
  #sdes: LocalSdes | undefined;
  /** The stream's SRTP, once an offer/answer agreed keys; re-keyed in place by later ones. */
  #srtp: SrtpSession | undefined;

  /** The codecs our offers and answers carry: the endpoint's, until PJSIP_MEDIA_OFFER writes others. */
  #codecs: readonly SdpCodec[];
  /** Written by PJSIP_MEDIA_OFFER: our offers carry exactly these, not merged with the calling side's. */
  #codecsWritten = false;
  /** The endpoint's dtmf_mode, until PJSIP_DTMF_MODE writes another. */
  #dtmfMode: DtmfMode;
  /** Direct media (direct-media.ts): the other leg's far end, which our offers and answers name instead of us. */
  #directTarget: DirectTarget | undefined;

  constructor(
    codecs: readonly SdpCodec[],
    private readonly options: SdpOptions,
    /** Our media address (c= and o=), read when a body is written. */
    private readonly address: () => string,
    /** The call's stream, once bound. */
    private readonly stream: () => CallRtpStream | undefined,
    /** Ms media may go unanswered to a far end's address (see StreamParameters.unansweredLimitMs); undefined: no limit. */
    private readonly unansweredLimit: (address: string | undefined) => number | undefined = () => undefined,
    /** The system's and the endpoint's follow_early_media_fork and accept_multiple_sdp_answers, read at each later answer. */
    earlyAnswerOptions: () => EarlyAnswerOptions = () => DEFAULT_EARLY_ANSWER_OPTIONS,
  ) {
    this.#answers = new EarlyAnswers(earlyAnswerOptions);
    this.#codecs = codecs;
    this.#dtmfMode = options.dtmfMode;
  }

  /** Our media address as our SDP writes it (CHANNEL(rtp,src)). */
  get mediaAddress(): string {
    return this.address();
  }

  /** Where our SDP points the far end's media instead of at us (direct media); undefined: at us. */
  get directTarget(): DirectTarget | undefined {
    return this.#directTarget;
  }

  set directTarget(target: DirectTarget | undefined) {
    this.#directTarget = target;
  }

  /** The codecs of our next offer (PJSIP_MEDIA_OFFER's read). */
  get codecs(): readonly SdpCodec[] {
    return this.#codecs;
  }

  /**
   * PJSIP_MEDIA_OFFER's write: the codecs of our next offer, as given (an outgoing call's INVITE when
   * written before it goes, in a pre-dial handler; else the next re-INVITE or UPDATE of ours).
   */
  set codecs(codecs: readonly SdpCodec[]) {
    this.#codecs = codecs;
    this.#codecsWritten = true;
  }

  get dtmfMode(): DtmfMode {
    return this.#dtmfMode;
  }

  /** PJSIP_DTMF_MODE's write: how digits go from now on; the next offer or answer says it in its SDP. */
  set dtmfMode(mode: DtmfMode) {
    this.#dtmfMode = mode;
  }

  /** What the last completed offer/answer agreed. */
  get negotiated(): NegotiatedMedia | undefined {
    return this.#negotiated;
  }

  /** Our last SDP body (offer or answer). */
  get localSdp(): string | undefined {
    return this.#localSdp;
  }

  /**
   * Answers the far end's offer: the first of a call, or a `fresh` one in a re-INVITE (our answer
   * then has a new o= version, RFC 3264 §8). 488 when nothing is common, 400 for an unusable body.
   */
  answer(offer: Buffer, fresh: boolean): { ok: true } | { ok: false; status: number; reason: string } {
    const answer = answerOffer(offer, { ...this.#local(), sessionVersion: fresh ? this.#version + 1 : this.#version });
    if (!answer.ok) return answer;
    if (fresh) this.#version += 1;
    this.#localSdp = answer.sdp;
    this.#beforeOffer = undefined;
    this.#apply(answer.media);
    return { ok: true };
  }

  /**
   * Our offer: the first of a call, or a `fresh` one (a new o= version) for a re-INVITE of ours or an
   * offer-less one from the far end. `coreCodecs`, for an outgoing call, are the calling side's codecs
   * that outgoing_call_offer_pref orders with ours (without them the endpoint's allow is offered as
   * is); `direction` is the one we want (hold passthrough), sendrecv by default.
   */
  offer(fresh: boolean, options: { readonly coreCodecs?: readonly string[]; readonly direction?: MediaDirection } = {}): string {
    // The first of several unanswered offers (a 491's retry) keeps what was in force before them all.
    if (fresh) this.#beforeOffer ??= this.#localSdp;
    if (fresh) this.#version += 1;
    const { coreCodecs, direction } = options;
    const direct = this.#directTarget;
    const codecs = direct ? [direct.codec] : coreCodecs && !this.#codecsWritten ? offerCodecs(this.#codecs, coreCodecs, this.options.outgoingOfferPref ?? DEFAULT_OFFER_PREFERENCE) : this.#codecs;
    this.#localSdp = buildOffer({ ...this.#local(), codecs, ...(direction ? { direction } : {}) });
    return this.#localSdp;
  }

  /**
   * Takes the far end's answer to our last offer (made with `direction`); false when it is unusable
   * (the media stays as it was). `otherFarEnd`: it comes from another party than the answer before
   * it (another fork of our INVITE), whose RTP still coming is dropped from now on.
   */
  takeAnswer(answer: Buffer, direction?: MediaDirection, otherFarEnd = false): boolean {
    const accepted = acceptAnswer(answer, { ...this.#local(), ...(direction ? { direction } : {}) });
    if (accepted.ok) {
      this.#beforeOffer = undefined;
      this.#apply(accepted.media, otherFarEnd);
    }
    return accepted.ok;
  }

  /**
   * The SDP of a 1xx or 2xx to our INVITE (`reliable`: a 1xx sent with 100rel). The first answer sets
   * the media; a later one from another fork or from the same early dialog replaces it only as
   * pjsip and res_pjsip_session let it (early-answers.ts: follow_early_media_fork,
   * accept_multiple_sdp_answers).
   */
  takeInviteAnswer(response: SipResponse, reliable: boolean): void {
    const body = sessionDescriptionOf(response);
    if (body.length === 0) return;
    const answer = { status: response.status, tag: response.toTag(), reliable };
    const verdict = this.#answers.judge(answer);
    if (verdict === 'ignored') return;
    if (verdict !== 'noted') {
      if (!this.takeAnswer(body, undefined, verdict === 'fork')) return;
      this.exchange.closed();
      if (verdict === 'first' && response.status < 200) this.#earlyAnswered = true;
    }
    this.#answers.taken(answer);
  }

  /** Whether a 183 to our INVITE brought the media (its answer taken before the call was answered). */
  get earlyAnswered(): boolean {
    return this.#earlyAnswered;
  }

  /**
   * Our last offer came to nothing (refused, or its 2xx or ACK carried no usable answer): the session
   * goes on as before it (RFC 3261 §14.1, RFC 3264 §8), so our SDP is again the one in force then, for
   * a later refresh to repeat. The stream was never moved (only an answer does that), and the o=
   * version stays counted: the next offer's is higher than the refused one's.
   */
  withdrawOffer(): void {
    if (this.#beforeOffer !== undefined) this.#localSdp = this.#beforeOffer;
    this.#beforeOffer = undefined;
  }

  #local(): LocalMedia {
    const { prefer, keep } = this.options.incomingOfferPref ?? DEFAULT_ANSWER_PREFERENCE;
    const direct = this.#directTarget;
    return {
      prefer,
      keep,
      // Direct media names the other leg's far end, with the one codec both already use (no transcoding between them).
      address: direct?.address ?? this.address(),
      port: direct?.port ?? this.stream()?.localPort ?? 9,
      codecs: direct ? [direct.codec] : this.#codecs,
      sessionId: this.#sessionId,
      sessionVersion: this.#version,
      userAgent: 'Patchbay',
      ...(this.options.sdpOwner === undefined ? {} : { owner: this.options.sdpOwner }),
      ...(this.options.sdpSession === undefined ? {} : { sessionName: this.options.sdpSession }),
      answerPtime: this.options.usePtime === true ? 'offer' : 'local',
      // inband and info carry no telephone-events, so none are offered (as Asterisk).
      ...(this.#dtmfMode === 'inband' || this.#dtmfMode === 'info' ? { telephoneEvent: false as const } : {}),
      rtcpMux: this.options.rtcpMux,
      ...(this.options.omitStaticRtpmap === true ? { omitStaticRtpmap: true } : {}),
      ...(this.#localSdes() ? { sdes: this.#localSdes() } : {}),
      ...this.#secure(),
    };
  }

  /** ICE credentials, certificate fingerprint and candidates of a WebRTC stream (its socket, or its worker's, secures the media). */
  #secure(): { secure?: SecureLocalMedia } {
    const stream = this.stream();
    const socket = webRtcMediaOf(stream);
    if (!stream || !socket) return {};
    const bound = socket instanceof SecureMediaSocket ? socket.address().address : socket.boundAddress;
    const addresses = [...new Set([this.address(), ...(bound === '0.0.0.0' || bound === '::' ? [] : [bound])])];
    return {
      secure: {
        iceUfrag: socket.ice.local.ufrag,
        icePwd: socket.ice.local.pwd,
        fingerprint: socket.fingerprint,
        setup: this.options.dtlsSetup ?? 'actpass',
        candidates: addresses.map((address) => ({ address, port: stream.localPort })),
        avpf: this.options.useAvpf ?? true,
        forceAvp: this.options.forceAvp === true,
      },
    };
  }

  /** Our SDES side, or undefined without media_encryption=sdes. */
  #localSdes(): LocalSdes | undefined {
    if (this.options.mediaEncryption !== 'sdes') return undefined;
    if (!this.#sdes) {
      const suites = this.options.srtpTag32 ? (['AES_CM_128_HMAC_SHA1_32', 'AES_CM_128_HMAC_SHA1_80'] as const) : (['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as const);
      const keys: SrtpMasterKey[] = suites.map((suite) => ({ suite, keySalt: randomBytes(MASTER_KEY_SALT_BYTES) }));
      this.#sdes = { keys, optimistic: this.options.mediaEncryptionOptimistic === true };
    }
    return this.#sdes;
  }

  /** The stream's protection for what was agreed: SRTP keyed (or re-keyed) by it, else none. */
  #protection(media: NegotiatedMedia): SrtpSession | undefined {
    if (!media.srtp) {
      this.#srtp = undefined;
      return undefined;
    }
    if (this.#srtp) this.#srtp.rekey(media.srtp.local, media.srtp.remote);
    else this.#srtp = new SrtpSession(media.srtp.local, media.srtp.remote);
    return this.#srtp;
  }

  #apply(media: NegotiatedMedia, otherFarEnd = false): void {
    this.#negotiated = media;
    const socket = webRtcMediaOf(this.stream());
    const security = media.security;
    if (socket && security) {
      socket.configureRemote({
        ...(security.remote.iceUfrag === undefined ? {} : { iceUfrag: security.remote.iceUfrag }),
        ...(security.remote.fingerprint === undefined ? {} : { fingerprint: security.remote.fingerprint }),
        role: dtlsRole(security.setup, security.remote.setup),
      });
    }
    // A browser's c= may be 0.0.0.0 until checks run: its first candidate stands in (the socket sends to the checked pair anyway).
    const fallback = security?.remote.candidates[0];
    const remoteAddress = media.remoteAddress ?? fallback?.address;
    this.stream()?.configure({
      codec: media.codec,
      ...(media.opus ? { coderOptions: { opus: media.opus } } : {}),
      payloadType: media.payloadType,
      receiveCodecs: media.codecs,
      telephoneEventPt: media.telephoneEventPt,
      ...(media.telephoneEventRate === undefined ? {} : { telephoneEventRate: media.telephoneEventRate }),
      remoteAddress,
      remotePort: media.remoteAddress === undefined && fallback ? fallback.port : media.remotePort,
      remoteRtcpPort: media.remoteRtcpPort,
      rtcpMux: media.rtcpMux,
      direction: media.direction,
      inbandDtmf: dtmfInband(this.#dtmfMode, media),
      unansweredLimitMs: this.unansweredLimit(remoteAddress),
      // WebRTC: the socket is the protection (SRTP keyed by its DTLS handshake; in a worker, the worker's socket); else SDES's, or none.
      protection: socket instanceof SecureMediaSocket ? socket : socket ? undefined : this.#protection(media),
      ...(otherFarEnd ? { otherFarEnd: true } : {}),
      ...((this.options.rtpKeepalive ?? 0) > 0 ? { keepaliveMs: (this.options.rtpKeepalive ?? 0) * 1000 } : {}),
    });
  }
}

/** A WebRTC stream's secure media: its socket on this thread, or the handshake's side of one in a media worker. */
function webRtcMediaOf(stream: CallRtpStream | undefined): SecureMediaSocket | RemoteSecureMedia | undefined {
  if (stream?.socket instanceof SecureMediaSocket) return stream.socket;
  return stream instanceof RemoteRtpStream ? stream.secure : undefined;
}
