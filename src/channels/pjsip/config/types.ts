// Typed res_pjsip objects, named after Asterisk's attributes (camelCase here, snake_case in the files).
import type { WebRtcEndpointOptions } from './webrtc-options.ts';
import type { RtpEndpointOptions } from './rtp-options.ts';
import type { MediaEndpointOptions } from './media-options.ts';
import type { ChannelEndpointOptions } from './channel-options.ts';
import type { SdpCodec } from '../../../sip/sdp/offer-answer.ts';
import type { CodecPreference } from '../../../sip/sdp/codec-preference.ts';
import type { TlsSettings } from '../../../sip/tls-material.ts';
import type { HostPort, IdentifyMatch, IpNetwork } from './values.ts';
import type { AclRule } from '../../../util/acl.ts';
import type { CallGroups } from '../../../core/channels/call-groups.ts';

/** One `name=value` of an object, in the order written; `where` names its origin (`pjsip.conf:12`). */
export interface RawField {
  readonly name: string;
  readonly value: string;
  readonly where?: string;
}

/**
 * An object from any of the three sources: a pjsip.conf section, the YAML `config_objects`, or a
 * dynamic configuration PUT. Fields as an ordered list (repeated keys kept) or as a record.
 */
export interface RawPjsipObject {
  readonly type: string;
  readonly id: string;
  readonly fields: readonly RawField[] | Readonly<Record<string, string | number | boolean>>;
  /** Origin of the object for messages: `pjsip.conf:10`, `config_objects.res_pjsip.endpoint.alice` … */
  readonly where?: string;
}

export type DtmfMode = 'rfc4733' | 'inband' | 'info' | 'auto' | 'auto_info';
/** Endpoint `media_encryption`. */
export type MediaEncryption = 'no' | 'sdes' | 'dtls';
export type IdentifyBy = 'username' | 'auth_username' | 'ip' | 'header' | 'request_uri';
export type Rel100Mode = 'no' | 'yes' | 'required' | 'peer_supported';
export type SessionTimersMode = 'no' | 'yes' | 'required' | 'always' | 'forced';
export type IncomingOfferPref = 'local' | 'local_first' | 'remote' | 'remote_first';
export type OutgoingOfferPref = 'local' | 'local_merge' | 'local_first' | 'remote' | 'remote_merge' | 'remote_first';
export type IdentifierMethod = 'ip' | 'username' | 'anonymous' | 'header' | 'auth_username' | 'request_uri';

export interface PjsipEndpoint extends WebRtcEndpointOptions, ChannelEndpointOptions, RtpEndpointOptions, MediaEndpointOptions {
  readonly type: 'endpoint';
  readonly id: string;
  readonly context: string;
  readonly messageContext?: string;
  /** Resolved allow/disallow, in preference order; only codecs Patchbay carries. */
  readonly codecs: readonly SdpCodec[];
  readonly auth: readonly string[];
  readonly outboundAuth: readonly string[];
  readonly aors: readonly string[];
  /** permit/deny/acl and their contact_ forms: checked once a request is identified (endpoint-acl.ts). */
  readonly acls: AclLists;
  readonly dtmfMode: DtmfMode;
  /** Direct media (direct-media.ts): the far end's RTP may go straight to the other party of a two-party bridge. */
  readonly directMedia: boolean;
  readonly directMediaMethod: 'invite' | 'reinvite' | 'update';
  readonly directMediaGlareMitigation: 'none' | 'outgoing' | 'incoming';
  readonly disableDirectMediaOnNat: boolean;
  readonly identifyBy: readonly IdentifyBy[];
  readonly callerId?: { readonly name?: string; readonly number?: string };
  readonly fromUser?: string;
  readonly fromDomain?: string;
  /** Add P-Asserted-Identity / Remote-Party-ID with the caller's id to outbound INVITEs. */
  readonly sendPai: boolean;
  readonly sendRpid: boolean;
  /** Add Diversion (res_pjsip_diversion) to INVITEs of a redirected channel / History-Info to every INVITE. */
  readonly sendDiversion: boolean;
  readonly sendHistoryInfo: boolean;
  /** Take an inbound call's caller id from its P-Asserted-Identity / Remote-Party-ID. */
  readonly trustIdInbound: boolean;
  /** Send a restricted id's identity headers (PAI with Privacy: id, RPID privacy=full); its From is anonymous anyway. */
  readonly trustIdOutbound: boolean;
  /** callerid_privacy: the presentation (an AST_PRES_* value) of the endpoint's own id and of an untrusted caller's. */
  readonly callerIdPrivacy: number;
  /** Connected line over SIP (connected-line.ts): updates sent, their method, updates taken, before the answer at once. */
  readonly sendConnectedLine: boolean;
  readonly connectedLineMethod: 'invite' | 'reinvite' | 'update';
  readonly trustConnectedLine: boolean;
  readonly rpidImmediate: boolean;
  readonly transport?: string;
  readonly language?: string;
  /** tone_zone: the country whose tones the endpoint's channels hear for indications played in band. */
  readonly toneZone?: string;
  /** call_group, pickup_group (64-bit masks) and named_call_group, named_pickup_group: the endpoint's channels' groups (call pickup). */
  readonly groups?: CallGroups;
  /** inband_progress: ringing before the answer is sent as 183 with SDP and heard in band (chan_pjsip). */
  readonly inbandProgress: boolean;
  /**
   * follow_early_media_fork / accept_multiple_sdp_answers: whether our INVITE's media follows a later
   * SDP answer from another fork / from the same early dialog (early-answers.ts), where the system
   * section lets it be taken at all.
   */
  readonly followEarlyMediaFork: boolean;
  readonly acceptMultipleSdpAnswers: boolean;
  /** ignore_183_without_sdp: a 183 without SDP to our INVITE is no progress (chan_pjsip). */
  readonly ignore183WithoutSdp: boolean;
  readonly rtpSymmetric: boolean;
  readonly forceRport: boolean;
  readonly rewriteContact: boolean;
  /** An INVITE whose user part could match an extension after more digits is answered 484 (else 404). */
  readonly allowOverlap: boolean;
  readonly mediaAddress?: string;
  /** Offer/accept RTCP on the RTP port (RFC 5761) when the far end does too. */
  readonly rtcpMux: boolean;
  /** `media_encryption`: SDES-SRTP (`sdes`); `dtls` is parsed and waits for DTLS-SRTP (WebRTC). */
  readonly mediaEncryption: MediaEncryption;
  /** `media_encryption_optimistic`: offer RTP/AVP with a=crypto and accept plain RTP too. */
  readonly mediaEncryptionOptimistic: boolean;
  /** `srtp_tag_32`: prefer AES_CM_128_HMAC_SHA1_32 (offered first). */
  readonly srtpTag32: boolean;
  /** Seconds without RTP before hanging up; 0 = never. */
  readonly rtpTimeout: number;
  readonly outboundProxy?: string;
  readonly allowUnauthenticatedOptions: boolean;
  /** `100rel`: reliable provisional responses (RFC 3262). */
  readonly rel100: Rel100Mode;
  readonly timers: SessionTimersMode;
  /** Seconds (RFC 4028 Min-SE). */
  readonly timersMinSe: number;
  /** Seconds (RFC 4028 Session-Expires). */
  readonly timersSessExpires: number;
  readonly incomingCallOfferPref: IncomingOfferPref;
  readonly outgoingCallOfferPref: OutgoingOfferPref;
  /** Hold from the peer is passed to the endpoint by re-INVITE instead of playing it music on hold. */
  readonly mohPassthrough: boolean;
  /** What a 3xx to our INVITE does: forward to its Contact's user or URI (Dial() follows), or follow it ourselves. */
  readonly redirectMethod: RedirectMethod;
  /** No `Reason: Q.850` on our BYE, CANCEL and refusals (res_pjsip_rfc3326). */
  readonly suppressQ850ReasonHeaders: boolean;
  /** codec_prefs_incoming_offer / codec_prefs_outgoing_offer, when set: they win over the *_call_offer_pref options. */
  readonly codecPrefsIncomingOffer?: CodecPreference;
  readonly codecPrefsOutgoingOffer?: CodecPreference;
  /** SUBSCRIBE from the endpoint is served (no: 603). */
  readonly allowSubscribe: boolean;
  /** Dialplan context whose hints `dialog` and `presence` subscriptions watch (else `context`). */
  readonly subscribeContext?: string;
  /** Shortest subscription accepted (seconds; 423 below). */
  readonly subMinExpiry: number;
  /** Mailboxes whose counts go to the endpoint's contacts as unsolicited MWI NOTIFYs. */
  readonly mailboxes: readonly string[];
  /** A SUBSCRIBE for a mailbox the endpoint gets unsolicited MWI for replaces the unsolicited NOTIFYs (no: it is refused). */
  readonly mwiSubscribeReplacesUnsolicited: boolean;
  /** User of the Message-Account URI of unsolicited MWI. */
  readonly voicemailExtension?: string;
  /** One unsolicited NOTIFY with the sum of all `mailboxes` (no: one per mailbox). */
  readonly aggregateMwi: boolean;
  /** From user of unsolicited MWI NOTIFYs. */
  readonly mwiFromUser?: string;
  /** `incoming_mwi_mailbox` (`mailbox@context`): an unsolicited MWI NOTIFY from the endpoint sets this mailbox's counts. */
  readonly incomingMwiMailbox?: string;
  /** An extension ringing while in use is shown as an early dialog (ringing) in dialog-info; no: confirmed. */
  readonly notifyEarlyInuseRinging: boolean;
}

/** redirect_method: `user` (Dial() forwards to the Contact's user), `uri_core` (to PJSIP/<endpoint>/<Contact>), `uri_pjsip` (the INVITE follows the Contact). */
export type RedirectMethod = 'user' | 'uri_core' | 'uri_pjsip';

export interface PjsipAor {
  readonly type: 'aor';
  readonly id: string;
  readonly maxContacts: number;
  readonly removeExisting: boolean;
  /** Static contacts (`contact=`), SIP URIs in order. */
  readonly contacts: readonly string[];
  readonly qualifyFrequency: number;
  readonly qualifyTimeout: number;
  readonly defaultExpiration: number;
  readonly minimumExpiration: number;
  readonly maximumExpiration: number;
  readonly outboundProxy?: string;
  /** Mailboxes a `message-summary` SUBSCRIBE to this AOR reports. */
  readonly mailboxes: readonly string[];
  /** User of the Message-Account URI of those subscriptions (and a resource name that finds this AOR). */
  readonly voicemailExtension?: string;
  /** With max_contacts reached, unavailable (qualify failed) contacts make room first. */
  readonly removeUnavailable: boolean;
  /** Only a 2xx answer to a qualify OPTIONS makes the contact Reachable. */
  readonly qualify2xxOnly: boolean;
  /** Accepted for Asterisk's sake: a challenged qualify is always answered with the endpoint's outbound_auth. */
  readonly authenticateQualify: boolean;
  /** RFC 3327: a REGISTER's Path is stored and requests to the contact are routed through it. */
  readonly supportPath: boolean;
}

export interface PjsipAuth {
  readonly type: 'auth';
  readonly id: string;
  readonly authType: 'userpass' | 'md5';
  readonly username: string;
  /** With auth_type=userpass. */
  readonly password?: string;
  /** With auth_type=md5: hex MD5 of `username:realm:password`, lower case. */
  readonly md5Cred?: string;
  readonly realm?: string;
  /** Seconds (Asterisk default 32). */
  readonly nonceLifetime: number;
}

export interface PjsipIdentify {
  readonly type: 'identify';
  readonly id: string;
  readonly endpoint: string;
  readonly match: readonly IdentifyMatch[];
  /** `match_header`: a request carrying this header with this value is from `endpoint`. */
  readonly matchHeader?: { readonly name: string; readonly value: string };
  readonly srvLookups: boolean;
}

/** protocol=tls reads the TLS settings (files, version, ciphers, certificate checks); the other protocols ignore them. */
export interface PjsipTransport extends TlsSettings {
  readonly type: 'transport';
  readonly id: string;
  /** `ws`/`wss`: SIP over WebSocket on the HTTP server (RFC 7118); `bind` is then not used. */
  readonly protocol: 'udp' | 'tcp' | 'tls' | 'ws' | 'wss';
  /** `bind`: where this transport listens; port 5060 when not given. */
  readonly bind: { readonly host: string; readonly port: number };
  readonly externalMediaAddress?: string;
  readonly externalSignalingAddress?: string;
  readonly externalSignalingPort?: number;
  readonly localNet: readonly IpNetwork[];
  /** tcp_keepalive_enable: the kernel's keep-alive probes on TCP and TLS connections. */
  readonly tcpKeepaliveEnable: boolean;
  /** Seconds idle before the first probe. */
  readonly tcpKeepaliveIdleTime: number;
  /** Parsed only: Node sets neither the probe interval nor the count. */
  readonly tcpKeepaliveIntervalTime: number;
  readonly tcpKeepaliveProbeCount: number;
  readonly symmetricTransport: boolean;
  readonly allowReload: boolean;
}

export interface PjsipRegistration {
  readonly type: 'registration';
  readonly id: string;
  readonly serverUri: string;
  readonly clientUri: string;
  readonly contactUser?: string;
  readonly outboundAuth: readonly string[];
  readonly transport?: string;
  readonly outboundProxy?: string;
  readonly expiration: number;
  readonly retryInterval: number;
  readonly forbiddenRetryInterval: number;
  readonly fatalRetryInterval: number;
  readonly maxRetries: number;
  readonly authRejectionPermanent: boolean;
  readonly line: boolean;
  readonly endpoint?: string;
  /** Seconds: the first REGISTER goes out after a random delay up to this (Asterisk default 10). */
  readonly maxRandomInitialDelay: number;
  /** User-Agent of this registration's REGISTERs (else global user_agent). */
  readonly userAgent?: string;
  /** Header parameters after the Contact's `>`, without the leading `;`. */
  readonly contactHeaderParams?: string;
  /** `Supported: path` in the REGISTERs. */
  readonly supportPath: boolean;
}

export interface PjsipDomainAlias {
  readonly type: 'domain_alias';
  readonly id: string;
  readonly domain: string;
}

export interface PjsipGlobal {
  readonly type: 'global';
  readonly id: string;
  readonly endpointIdentifierOrder: readonly IdentifierMethod[];
  readonly defaultRealm: string;
  readonly userAgent: string;
  readonly defaultFromUser: string;
  readonly maxForwards: number;
  readonly keepAliveInterval: number;
  /** allow_sending_180_after_183: Ringing after our 183 (or with inband_progress) is a 180, not another 183. */
  readonly allowSending180After183: boolean;
  /** Message-Account user of MWI when the AOR (solicited) or endpoint (unsolicited) names none. */
  readonly defaultVoicemailExtension?: string;
  /** Context of the `exten => <endpoint>,1,Noop(<endpoint>)` of each online endpoint. */
  readonly regcontext?: string;
  // Declared for Asterisk's pjsip.conf, parsed and validated, not acted on (named at start-up when set).
  readonly defaultOutboundEndpoint?: string;
  readonly ignoreUriUserOptions: boolean;
  readonly useCalleridContact: boolean;
  readonly norefersub: boolean;
  readonly allCodecsOnEmptyReinvite: boolean;
  readonly mwiDisableInitialUnsolicited: boolean;
  readonly unidentifiedRequestCount: number;
  readonly unidentifiedRequestPeriod: number;
  readonly unidentifiedRequestPruneInterval: number;
}

/**
 * `type=acl` (res_pjsip_acl): who may send requests at all. `rules` are the permit/deny lines in the
 * order written (a deny is a rule whose `allow` is false), `acl` the acl.conf sections that must
 * also allow; the `contact` pair is the same for the hosts of a request's Contact headers.
 */
/** The four lists of an ACL: a `type=acl` section's, or an endpoint's own (`acls`). */
export interface AclLists {
  readonly rules: readonly AclRule[];
  readonly acl: readonly string[];
  readonly contactRules: readonly AclRule[];
  readonly contactAcl: readonly string[];
}

export interface PjsipAcl extends AclLists {
  readonly type: 'acl';
  readonly id: string;
}

/** `type=system`: the transaction timers (read at start, as Asterisk does not reload the section). */
export interface PjsipSystem {
  readonly type: 'system';
  readonly id: string;
  /** T1 in ms (at least 100). */
  readonly timerT1: number;
  /** Timer B (and F): how long a client transaction waits for a final answer, ms (at least 64*T1). */
  readonly timerB: number;
  /** `disable_rport`: the Via of Patchbay's requests does not ask for rport. */
  readonly disableRport: boolean;
  /** `compact_headers`: what Patchbay sends uses the compact header names. Read at start. */
  readonly compactHeaders: boolean;
  /**
   * `follow_early_media_fork` / `accept_multiple_sdp_answers`: pjsip's own gate on a later SDP answer
   * to an INVITE (another fork's 18x / the same early dialog's 18x or 2xx); the endpoint's options decide
   * after it.
   */
  readonly followEarlyMediaFork: boolean;
  readonly acceptMultipleSdpAnswers: boolean;
}

export type PjsipObject =
  | PjsipAcl
  | PjsipSystem
  | PjsipEndpoint
  | PjsipAor
  | PjsipAuth
  | PjsipIdentify
  | PjsipTransport
  | PjsipRegistration
  | PjsipDomainAlias
  | PjsipGlobal;

export interface PjsipConfig {
  readonly endpoints: ReadonlyMap<string, PjsipEndpoint>;
  readonly aors: ReadonlyMap<string, PjsipAor>;
  readonly auths: ReadonlyMap<string, PjsipAuth>;
  readonly identifies: ReadonlyMap<string, PjsipIdentify>;
  readonly transports: ReadonlyMap<string, PjsipTransport>;
  readonly registrations: ReadonlyMap<string, PjsipRegistration>;
  readonly domainAliases: ReadonlyMap<string, PjsipDomainAlias>;
  /** The `global` section, or the defaults when there is none. */
  readonly global: PjsipGlobal;
  /** Every `type=acl` section: a request must pass all of them. */
  readonly acls: ReadonlyMap<string, PjsipAcl>;
  /** The `system` section, or the defaults when there is none. */
  readonly system: PjsipSystem;
  /** Sections of types Patchbay does not know, kept as read (each named in a warning). */
  readonly unknown: readonly RawPjsipObject[];
}

export type { HostPort, IdentifyMatch, IpNetwork };
