// What a SIP call (call.ts) is built from: the technology's services, the endpoint options that
// shape it, and which side of the INVITE it plays.
import type { WebRtcEndpointOptions } from './config/webrtc-options.ts';
import type { Logger } from 'pino';
import type { TechnologyMusicOnHold } from '../../core/channels/technology.ts';
import type { DigestCredentials } from '../../sip/auth/digest-client.ts';
import type { SipRequest } from '../../sip/message.ts';
import type { ServerTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { Destination, TransportProtocol } from '../../sip/transport.ts';
import type { SipUri, Uri } from '../../sip/uri.ts';
import type { OutboundIdentityOptions } from './caller-identity.ts';
import type { SdpOptions } from './call-media.ts';
import type { SessionExtensionOptions } from './session-extensions.ts';

/** The methods a call's dialog takes (Allow in its INVITEs, responses and refusals). */
export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE, INFO, UPDATE, REFER, NOTIFY, SUBSCRIBE';

/**
 * The technology's services a call uses, but for the two that name the call itself (call.ts's
 * CallServices adds them): parts of a call (hold.ts) take this without depending on the call.
 */
export interface CallEnvironment {
  readonly layer: TransactionLayer;
  readonly log: Logger;
  /** Our address as written in Contact and SDP. */
  readonly signallingHost: string;
  readonly signallingPort: number;
  /** The bound port of the named listener of a protocol (else the first of it): a TCP/TLS Contact names it. */
  portOf?(protocol: TransportProtocol, listener?: string): number | undefined;
  readonly mediaAddress: string;
  /**
   * Whether `mediaAddress` is an external address written towards every destination (no
   * `local_net`): an endpoint's `media_address` gives way to it, as Asterisk's NAT hook rewrites it.
   */
  readonly mediaAddressExternalEverywhere?: boolean;
  readonly userAgent: string;
  /** The global allow_sending_180_after_183: Ringing once early media is negotiated (or with inband_progress) sends 180, not 183. */
  readonly allowSending180After183?: boolean;
  /** The system section's compact_headers (read at start): our SDP leaves out the rtpmap of static payload types, as Asterisk's. */
  readonly compactHeaders?: boolean;
  /** The system section's follow_early_media_fork and accept_multiple_sdp_answers: pjsip's gate on a later SDP answer to our INVITE. */
  readonly systemEarlyAnswers?: { readonly followEarlyMediaFork: boolean; readonly acceptMultipleSdpAnswers: boolean };
  /** Ms media may go unanswered to an SDP address that is not the signalling's (sip.rtp_unanswered_ms); 0 = no limit. */
  readonly unansweredMediaMs: number;
  /** Music on hold for a held channel (moh_passthrough=no); undefined before the technology starts. */
  readonly musicOnHold: TechnologyMusicOnHold | undefined;
  /** Two calls connected with nothing else taking their audio may have it relayed inside their media worker (media.worker_relay). */
  readonly workerRelay?: boolean;
  /** A bridge of three or more such calls may be mixed in the media workers (media.worker_mix). */
  readonly workerMix?: boolean;
  /** A sound played to the call may be sent by its media worker by itself (media.worker_playback). */
  readonly workerPlayback?: boolean;
  /** A recording of the call's received audio may be written by its media worker (media.worker_recording). */
  readonly workerRecording?: boolean;
}

/**
 * The endpoint options that shape a call's media and where its signalling goes (invite-server.ts and
 * dialer.ts add the session options, endpointSessionOptions: codec preferences, 100rel, timers).
 */
/** The endpoint's options connected line over SIP reads (connected-line.ts), named as the endpoint's fields. */
export interface ConnectedLineOptions {
  readonly sendConnectedLine?: boolean;
  readonly connectedLineMethod?: 'invite' | 'reinvite' | 'update';
  readonly trustConnectedLine?: boolean;
  readonly rpidImmediate?: boolean;
  readonly sendPai?: boolean;
  readonly sendRpid?: boolean;
  readonly trustIdInbound?: boolean;
  readonly inbandProgress?: boolean;
}

export interface CallMediaOptions extends SdpOptions, Partial<SessionExtensionOptions>, Partial<Pick<WebRtcEndpointOptions, 'dtlsVerify' | 'dtlsCertFile' | 'dtlsPrivateKey'>>, ConnectedLineOptions {
  /** The endpoint's identity options (caller-identity.ts): how the connected line is named in our headers. */
  readonly identity?: OutboundIdentityOptions;
  /** Hold from the peer re-INVITEs this far end (endpoint `moh_passthrough`) instead of playing it music. */
  readonly mohPassthrough?: boolean;
  /** The music class the far end's hold suggests to its peer (endpoint `moh_suggest`, default `default`). */
  readonly mohSuggest?: string;
  /** Send RTP where the far end's comes from (endpoint `rtp_symmetric`, default no). */
  readonly rtpSymmetric?: boolean;
  /** The far end's Contact is the address its messages come from (endpoint `rewrite_contact`). */
  readonly rewriteContact?: boolean;
  /** Responses go to the port requests came from, asked or not (endpoint `force_rport`). */
  readonly forceRport?: boolean;
  /** Seconds without RTP from the far end before the call is hung up (endpoint `rtp_timeout`; 0 = never). */
  readonly rtpTimeout?: number;
  /** Seconds without RTP from the far end while it holds the call before it is hung up (endpoint `rtp_timeout_hold`; 0 = never). */
  readonly rtpTimeoutHold?: number;
  /** The address written in this endpoint's SDP instead of the transport's (endpoint `media_address`). */
  readonly mediaAddress?: string;
  /** The call's RTP sockets bind to `mediaAddress` (endpoint `bind_rtp_to_media_address`). */
  readonly bindRtpToMediaAddress?: boolean;
  /** Ringing before the answer is a 183 with SDP and the ring tone in band, not a 180 (endpoint `inband_progress`). */
  readonly inbandProgress?: boolean;
  /** A 183 without SDP to our INVITE is no progress (endpoint `ignore_183_without_sdp`). */
  readonly ignore183WithoutSdp?: boolean;
  /** A later SDP answer to our INVITE from another fork / the same early dialog moves the media (endpoint options; early-answers.ts). */
  readonly followEarlyMediaFork?: boolean;
  readonly acceptMultipleSdpAnswers?: boolean;
  /** What a 3xx to our INVITE does (endpoint `redirect_method`; default `user`). */
  readonly redirectMethod?: 'user' | 'uri_core' | 'uri_pjsip';
  /** No Q.850 Reason on our BYE, CANCEL and refusals (endpoint `suppress_q850_reason_headers`). */
  readonly suppressQ850ReasonHeaders?: boolean;
}

/**
 * Outbound: where the INVITE goes (the outbound proxy when set, named in `route`), the identity it
 * carries (caller-identity.ts) and the endpoint's outbound_auth credentials for its challenges.
 */
export interface OutboundSide {
  readonly kind: 'outbound';
  readonly target: Uri;
  readonly destination: Destination;
  readonly identity: OutboundIdentityOptions;
  readonly route?: string;
  readonly credentials: readonly DigestCredentials[];
  /** What the channel that asked for the call carries (its native format, or ARI's `formats`): outgoing_call_offer_pref's "remote". */
  readonly coreCodecs?: readonly string[];
  /**
   * The media worker of the requesting channel's stream (Dial()'s caller): this call's stream is
   * placed there when it has room, so that the two legs can be relayed inside it.
   */
  readonly nearWorker?: number;
  /** The AOR and contact (its Asterisk id) a call to `PJSIP/endpoint` took: CHANNEL(aor), CHANNEL(contact). */
  readonly contact?: { readonly aor: string; readonly id: string };
  /** Where an INVITE redirected to `uri` goes (redirect_method=uri_pjsip): the outbound proxy still, else the URI's address; undefined: unreachable. */
  readonly redirectDestination?: (uri: SipUri) => Destination | undefined;
  /** user_eq_phone: the From's URI takes `;user=phone` when its user is a number (the target was marked by the dialer). */
  readonly userEqPhone?: boolean;
}

/** Inbound: the INVITE, and the endpoint's outbound_auth credentials for the challenges to our requests in its dialog. */
export type Side = { kind: 'inbound'; invite: SipRequest; tx: ServerTransaction; offer?: Buffer; credentials?: readonly DigestCredentials[] } | OutboundSide;
