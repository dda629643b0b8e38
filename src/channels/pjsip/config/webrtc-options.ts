// The endpoint options of WebRTC media (browsers): ICE, DTLS-SRTP, AVPF, BUNDLE, and `webrtc`,
// (media_encryption=dtls itself is declared with the SDES options in declarations.ts)
// which turns them all on as Asterisk's does (use_avpf, ice_support, media_encryption=dtls,
// dtls_verify=fingerprint, dtls_setup=actpass, dtls_auto_generate_cert, rtcp_mux, bundle). Kept
// beside declarations.ts so the endpoint's other options stay as they were.
import { bool, choice, readableFile } from './options.ts';

export type DtlsVerify = 'no' | 'yes' | 'fingerprint' | 'certificate';

export interface WebRtcEndpointOptions {
  readonly webrtc: boolean;
  readonly iceSupport: boolean;
  readonly useAvpf: boolean;
  readonly dtlsVerify: DtlsVerify;
  readonly dtlsSetup: 'actpass' | 'active' | 'passive';
  readonly dtlsFingerprint: 'sha-256' | 'sha-1';
  readonly dtlsAutoGenerateCert: boolean;
  readonly dtlsCertFile?: string;
  readonly dtlsPrivateKey?: string;
  readonly bundle: boolean;
  /** force_avp: our DTLS lines name RTP/SAVP(F), and offers naming those are taken for DTLS too. */
  readonly forceAvp: boolean;
}

export const WEBRTC_DEFAULTS: WebRtcEndpointOptions = {
  webrtc: false,
  iceSupport: false,
  useAvpf: false,
  dtlsVerify: 'no',
  dtlsSetup: 'active',
  dtlsFingerprint: 'sha-256',
  dtlsAutoGenerateCert: false,
  bundle: false,
  forceAvp: false,
};

export const WEBRTC_ENDPOINT_OPTIONS = {
  webrtc: bool('webrtc', { default: 'no', doc: 'Browsers: turns on use_avpf, ice_support, media_encryption=dtls, dtls_verify=fingerprint, dtls_setup=actpass, dtls_auto_generate_cert, rtcp_mux and bundle.' }),
  ice_support: bool('iceSupport', { default: 'no', doc: 'ICE-lite (RFC 8445): host candidates in SDP, STUN checks answered, consent freshness (RFC 7675).' }),
  use_avpf: bool('useAvpf', { default: 'no', doc: 'Offer and accept RTP/SAVPF (AVPF) rather than RTP/SAVP.' }),
  dtls_verify: choice('dtlsVerify', ['no', 'yes', 'fingerprint', 'certificate'], { default: 'no', doc: '`fingerprint`/`yes`: the far end\'s certificate must match its SDP fingerprint (`certificate`: the same; no CA check).' }),
  dtls_setup: choice('dtlsSetup', ['actpass', 'active', 'passive'], { default: 'active', doc: 'DTLS role offered (an answer to actpass is active, RFC 5763).' }),
  dtls_fingerprint: choice('dtlsFingerprint', ['sha-256', 'sha-1'], { default: 'SHA-256', doc: 'Hash of our a=fingerprint (SHA-256 is written; SHA-1 is read).' }),
  dtls_auto_generate_cert: bool('dtlsAutoGenerateCert', { default: 'no', doc: 'Use a certificate generated at start (ECDSA P-256, one per process).' }),
  dtls_cert_file: readableFile('dtlsCertFile', { doc: 'PEM certificate for DTLS (instead of a generated one); also holds the key when dtls_private_key is not given, as in Asterisk.' }),
  dtls_private_key: readableFile('dtlsPrivateKey', { doc: 'PEM private key of dtls_cert_file (default: read from dtls_cert_file).' }),
  force_avp: bool('forceAvp', {
    default: 'no',
    doc: 'DTLS-SRTP media (media_encryption=dtls) is offered and answered as RTP/SAVP (RTP/SAVPF with use_avpf) rather than UDP/TLS/RTP/SAVP(F), and an offer naming RTP/SAVP(F) is accepted for it, as Asterisk\'s force_avp; plain RTP and SDES keep their profiles.',
  }),
  bundle: bool('bundle', { default: 'no', doc: 'BUNDLE (RFC 8843) of the one audio stream; other streams are refused with port 0.' }),
};

/** `webrtc=yes` as Asterisk applies it: the options it implies, whatever else was set. */
export function applyWebRtc<D extends WebRtcEndpointOptions & { rtcpMux: boolean; mediaEncryption: 'no' | 'sdes' | 'dtls' }>(draft: D): D {
  if (!draft.webrtc) return draft;
  return {
    ...draft,
    useAvpf: true,
    iceSupport: true,
    mediaEncryption: 'dtls',
    dtlsVerify: draft.dtlsVerify === 'no' ? 'fingerprint' : draft.dtlsVerify,
    dtlsSetup: 'actpass',
    dtlsAutoGenerateCert: draft.dtlsCertFile === undefined ? true : draft.dtlsAutoGenerateCert,
    rtcpMux: true,
    bundle: true,
  };
}

/** What the endpoint asks of WebRTC media that Patchbay does not do: one warning each. */
export function webRtcWarnings(endpoint: WebRtcEndpointOptions & { mediaEncryption: 'no' | 'sdes' | 'dtls' }): string[] {
  const warnings: string[] = [];
  if (endpoint.mediaEncryption === 'dtls' && !endpoint.iceSupport) warnings.push('media_encryption=dtls without ice_support=yes: Patchbay sends DTLS-SRTP only to a pair the far end checked with ICE (as browsers do)');
  return warnings;
}
