// The SDP of WebRTC media (JSEP as browsers write it): ICE (RFC 8839: a=ice-ufrag, a=ice-pwd,
// a=candidate, a=ice-lite), DTLS-SRTP (RFC 5763/8842: a=fingerprint, a=setup), one bundled audio
// stream (RFC 8843: a=group:BUNDLE, a=mid) with RTCP multiplexed, over UDP/TLS/RTP/SAVPF. Reading
// is bounded and checked like the rest of readSdp(); writing adds these to our audio line.
import type { MediaDescription, SessionAttributes } from 'sdp-transform';

export type DtlsSetup = 'actpass' | 'active' | 'passive';

/** What the far end's SDP says of ICE and DTLS for one m= line (media level, else session level). */
export interface RemoteSecurity {
  readonly iceUfrag?: string;
  readonly icePwd?: string;
  readonly fingerprint?: { readonly algorithm: string; readonly value: string };
  readonly setup?: DtlsSetup;
  readonly mid?: string;
  /** Its UDP candidates' addresses (at most MAX_CANDIDATES), for where media may go before checks. */
  readonly candidates: ReadonlyArray<{ readonly address: string; readonly port: number }>;
}

/** Our side: credentials, certificate fingerprint, role offered or chosen, candidates. */
export interface SecureLocalMedia {
  readonly iceUfrag: string;
  readonly icePwd: string;
  /** `sha-256 AB:CD:…` */
  readonly fingerprint: string;
  /** What we offer (endpoint dtls_setup, actpass by default); an answer picks from the offer's. */
  readonly setup: DtlsSetup;
  /** Host candidates (the RTP address, and external_media_address when set). */
  readonly candidates: ReadonlyArray<{ readonly address: string; readonly port: number }>;
  /** RTP/SAVPF (use_avpf) rather than RTP/SAVP. */
  readonly avpf: boolean;
  /** Endpoint `force_avp`: our lines name RTP/SAVP(F), not UDP/TLS/RTP/SAVP(F), and offers naming those are taken as DTLS too. */
  readonly forceAvp?: boolean;
}

const MAX_CANDIDATES = 32;
const ICE_CHARS = /^[A-Za-z0-9+/]{4,256}$/;
const FINGERPRINT = /^([0-9A-Fa-f]{2}:){15,63}[0-9A-Fa-f]{2}$/;
const SETUPS: readonly DtlsSetup[] = ['actpass', 'active', 'passive'];

/** Whether an m= line's protocol is DTLS-SRTP media (RFC 5764 §8: UDP/TLS/RTP/SAVP, or SAVPF with feedback). */
export function isDtlsProtocol(protocol: string): boolean {
  return /^UDP\/TLS\/RTP\/SAVPF?$/i.test(protocol);
}

/** The profile of our secure line: the DTLS one, or with force_avp the plain SRTP one older WebRTC gateways name (ast_sdp_get_rtp_profile). */
export function secureProfile(local: Pick<SecureLocalMedia, 'avpf' | 'forceAvp'>): string {
  return `${local.forceAvp === true ? '' : 'UDP/TLS/'}RTP/SAVP${local.avpf ? 'F' : ''}`;
}

/** Whether a line may carry our DTLS media: a DTLS profile, or with force_avp RTP/SAVP(F) too (Asterisk then takes the offer's profile as it comes). */
export function isSecureProfile(protocol: string, forceAvp = false): boolean {
  return isDtlsProtocol(protocol) || (forceAvp && /^RTP\/SAVPF?$/i.test(protocol));
}

/** Whether an m= line's protocol carries RTP (payload types as formats). */
export function isRtpProtocol(protocol: string): boolean {
  return /^(UDP\/TLS\/)?RTP\//i.test(protocol);
}

/** The ICE and DTLS attributes of one parsed m= line, checked; session-level ones apply when the line has none. */
export function readSecurity(media: Record<string, unknown>, session: Record<string, unknown>): RemoteSecurity {
  const pick = (key: string): unknown => media[key] ?? session[key];
  const ufrag = pick('iceUfrag');
  const pwd = pick('icePwd');
  const fingerprint = pick('fingerprint') as { type?: unknown; hash?: unknown } | undefined;
  const setup = SETUPS.find((value) => value === pick('setup'));
  const mid = media.mid;
  const candidates: Array<{ address: string; port: number }> = [];
  for (const candidate of Array.isArray(media.candidates) ? (media.candidates as Array<Record<string, unknown>>).slice(0, MAX_CANDIDATES) : []) {
    const port = typeof candidate.port === 'number' && Number.isInteger(candidate.port) && candidate.port > 0 && candidate.port <= 65535 ? candidate.port : undefined;
    if (String(candidate.transport).toLowerCase() !== 'udp' || typeof candidate.ip !== 'string' || port === undefined) continue;
    if (!/^[0-9a-fA-F.:]{2,45}$/.test(candidate.ip)) continue; // an mDNS name (.local) is no address we can use
    candidates.push({ address: candidate.ip, port });
  }
  return {
    ...(typeof ufrag === 'string' && ICE_CHARS.test(ufrag) ? { iceUfrag: ufrag } : {}),
    ...(typeof pwd === 'string' && ICE_CHARS.test(pwd) ? { icePwd: pwd } : {}),
    ...(fingerprint && typeof fingerprint.type === 'string' && typeof fingerprint.hash === 'string' && /^sha-(1|256|384|512)$/i.test(fingerprint.type) && FINGERPRINT.test(fingerprint.hash)
      ? { fingerprint: { algorithm: fingerprint.type.toLowerCase(), value: fingerprint.hash.toUpperCase() } }
      : {}),
    ...(setup ? { setup } : {}),
    ...((typeof mid === 'string' || typeof mid === 'number') && /^[A-Za-z0-9_-]{1,32}$/.test(String(mid)) ? { mid: String(mid) } : {}),
    candidates,
  };
}

/** Our setup in an answer (RFC 5763 §5): active to an actpass offer (recommended), else the opposite of the offer's. */
export function answerSetup(offered: DtlsSetup | undefined, preferred: DtlsSetup): DtlsSetup {
  if (offered === 'active') return 'passive';
  if (offered === 'passive') return 'active';
  return preferred === 'passive' ? 'passive' : 'active';
}

/** Our DTLS role once both setups are known: active is the client. */
export function dtlsRole(ours: DtlsSetup, theirs: DtlsSetup | undefined): 'client' | 'server' {
  if (ours === 'active') return 'client';
  if (ours === 'passive') return 'server';
  // We offered actpass: the answer's active makes us the server, its passive the client.
  return theirs === 'passive' ? 'client' : 'server';
}

/** The secure attributes of our audio line (its protocol, ICE, DTLS, mid), with `setup` as offered or answered. */
export function secureMediaAttributes(local: SecureLocalMedia, setup: DtlsSetup, mid: string): Partial<MediaDescription> {
  const [hashName, hash] = local.fingerprint.split(' ');
  return {
    protocol: secureProfile(local),
    iceUfrag: local.iceUfrag,
    icePwd: local.icePwd,
    fingerprint: { type: hashName!, hash: hash! },
    setup,
    mid,
    rtcpMux: 'rtcp-mux',
    candidates: local.candidates.map((candidate, index) => ({
      foundation: String(index + 1),
      component: 1,
      transport: 'udp',
      // Host candidates, the first preferred (RFC 8445 §5.1.2.1 type preference 126).
      priority: (126 << 24) | ((65535 - index) << 8) | 255,
      ip: candidate.address,
      port: candidate.port,
      type: 'host',
    })),
    endOfCandidates: 'end-of-candidates',
  };
}

/** Session-level attributes: we are an ICE-lite agent, and the audio line is bundled alone. */
export function secureSessionAttributes(mid: string): Partial<SessionAttributes> {
  return { icelite: 'ice-lite', groups: [{ type: 'BUNDLE', mids: mid }], msidSemantic: { semantic: 'WMS', token: '*' } };
}
