// A remote SDP body read safely: bounded in size, parsed with sdp-transform, then every number
// and address checked and copied into a small shape of our own. Never throws.
import { isIPv4, isIPv6 } from 'node:net';
import { parse as parseSdp } from 'sdp-transform';
import { MAX_CRYPTO_LINES, readCryptoLine, type CryptoAttribute } from './crypto.ts';
import { isRtpProtocol, readSecurity, type RemoteSecurity } from './webrtc.ts';

/** Largest SDP body read (a WebRTC-style offer with many candidates is a few kB). */
export const MAX_SDP_BYTES = 32 * 1024;
const MAX_LINE_LENGTH = 4096;
const MAX_LINES = 512;
const MAX_MEDIA = 16;
const MAX_FORMATS = 64;

export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface RtpMapEntry {
  readonly payloadType: number;
  /** Encoding name as written (compare case-insensitively). */
  readonly encoding: string;
  readonly clockRate: number;
  readonly channels?: number;
}

export interface RemoteMedia {
  /** Index of the m= line, 0-based: the answer has one line per offered line, in order. */
  readonly index: number;
  readonly type: string;
  readonly port: number;
  readonly protocol: string;
  /** Payload types listed on the m= line, in order (valid 0..127 only). */
  readonly formats: readonly number[];
  /** The m= line's format tokens as written (for rejecting a non-RTP line faithfully). */
  readonly rawFormats: readonly string[];
  readonly rtpmap: ReadonlyMap<number, RtpMapEntry>;
  readonly fmtp: ReadonlyMap<number, string>;
  /** Media-level c= if present and valid, else the session's; undefined when missing, a host name or invalid. */
  readonly address?: string;
  readonly addressFamily?: 4 | 6;
  /** True when the connection address is the RFC 2543 hold address 0.0.0.0 (or ::). */
  readonly nullAddress: boolean;
  readonly direction: MediaDirection;
  readonly ptime?: number;
  readonly rtcpPort?: number;
  /** a=rtcp-mux (RFC 5761): RTCP may share the RTP port. */
  readonly rtcpMux: boolean;
  /** The usable a=crypto lines (SDES, RFC 4568), in the offer's order of preference. */
  readonly crypto: readonly CryptoAttribute[];
  /** Whether any a=crypto line was present, usable or not (an RTP/AVP line with one is an optimistic SRTP offer). */
  readonly cryptoOffered: boolean;
  /** ICE and DTLS attributes (WebRTC, webrtc.ts). */
  readonly security: RemoteSecurity;
}

export interface RemoteSession {
  readonly originAddress?: string;
  readonly sessionId?: string;
  readonly sessionVersion?: string;
  readonly media: readonly RemoteMedia[];
}

export type SdpReadResult = { readonly ok: true; readonly session: RemoteSession } | { readonly ok: false; readonly reason: string };

const DIRECTIONS: readonly MediaDirection[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

function asDirection(value: unknown): MediaDirection | undefined {
  return DIRECTIONS.find((direction) => direction === value);
}

function intIn(value: unknown, min: number, max: number): number | undefined {
  const number = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= min && number <= max ? number : undefined;
}

function connectionOf(connection: unknown): { address?: string; family?: 4 | 6; nullAddress: boolean } | undefined {
  if (typeof connection !== 'object' || connection === null) return undefined;
  const { version, ip } = connection as { version?: unknown; ip?: unknown };
  if (typeof ip !== 'string') return { nullAddress: false };
  if (version === 4 && isIPv4(ip)) return { address: ip, family: 4, nullAddress: ip === '0.0.0.0' };
  if (version === 6 && isIPv6(ip)) return { address: ip, family: 6, nullAddress: /^[0:]+$/.test(ip) };
  // A host name, a multicast address with TTL, or nonsense: present but unusable.
  return { nullAddress: false };
}

/** An a=crypto line sdp-transform could not split still says SRTP was offered. */
function hasInvalidCrypto(invalid: unknown): boolean {
  return Array.isArray(invalid) && invalid.some((line) => typeof (line as { value?: unknown })?.value === 'string' && /^crypto:/i.test((line as { value: string }).value));
}

/** Reads an SDP body; `reason` says why it is unusable (the caller answers 400 or 488). */
export function readSdp(body: string | Uint8Array | undefined): SdpReadResult {
  try {
    return readUnsafe(body);
  } catch {
    // sdp-transform is not ours; whatever it does on input we did not foresee is a bad body, not a crash.
    return { ok: false, reason: 'unparseable SDP' };
  }
}

function readUnsafe(body: string | Uint8Array | undefined): SdpReadResult {
  if (body === undefined) return { ok: false, reason: 'no SDP' };
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (length === 0) return { ok: false, reason: 'no SDP' };
  if (length > MAX_SDP_BYTES) return { ok: false, reason: `SDP larger than ${MAX_SDP_BYTES} bytes` };
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > MAX_LINES) return { ok: false, reason: `SDP with more than ${MAX_LINES} lines` };
  if (lines.some((line) => line.length > MAX_LINE_LENGTH)) return { ok: false, reason: 'SDP line too long' };
  if (!/^v=0\s*$/.test(lines[0] ?? '')) return { ok: false, reason: 'SDP does not start with v=0' };
  if (lines.filter((line) => line.startsWith('m=')).length > MAX_MEDIA) return { ok: false, reason: `more than ${MAX_MEDIA} media lines` };

  const parsed = parseSdp(text) as unknown as Record<string, unknown>;
  const sessionConnection = connectionOf(parsed.connection);
  const sessionDirection = asDirection(parsed.direction) ?? 'sendrecv';
  const rawMedia = Array.isArray(parsed.media) ? parsed.media : [];
  if (rawMedia.length === 0) return { ok: false, reason: 'SDP without media' };

  const media: RemoteMedia[] = [];
  for (let index = 0; index < rawMedia.length; index++) {
    const m = rawMedia[index] as Record<string, unknown>;
    const port = intIn(m.port, 0, 65535);
    if (typeof m.type !== 'string' || port === undefined || typeof m.protocol !== 'string') {
      return { ok: false, reason: `m= line ${index + 1} is malformed` };
    }
    const rawFormats = String(m.payloads ?? '')
      .split(/\s+/)
      .filter((token) => token !== '');
    if (rawFormats.length === 0 || rawFormats.length > MAX_FORMATS) return { ok: false, reason: `m= line ${index + 1} has a bad format list` };
    const isRtp = isRtpProtocol(m.protocol);
    const formats: number[] = [];
    if (isRtp) {
      for (const token of rawFormats) {
        const pt = intIn(token, 0, 127);
        if (pt === undefined) return { ok: false, reason: `m= line ${index + 1} has payload type '${token.slice(0, 16)}'` };
        if (!formats.includes(pt)) formats.push(pt);
      }
    }
    const rtpmap = new Map<number, RtpMapEntry>();
    for (const entry of Array.isArray(m.rtp) ? (m.rtp as Array<Record<string, unknown>>) : []) {
      const payloadType = intIn(entry.payload, 0, 127);
      const clockRate = intIn(entry.rate, 1, 1_000_000);
      if (payloadType === undefined || clockRate === undefined || typeof entry.codec !== 'string' || rtpmap.has(payloadType)) continue;
      const channels = intIn(entry.encoding, 1, 255);
      rtpmap.set(payloadType, { payloadType, encoding: entry.codec, clockRate, ...(channels === undefined ? {} : { channels }) });
    }
    const fmtp = new Map<number, string>();
    for (const entry of Array.isArray(m.fmtp) ? (m.fmtp as Array<Record<string, unknown>>) : []) {
      const payloadType = intIn(entry.payload, 0, 127);
      if (payloadType !== undefined && typeof entry.config === 'string' && !fmtp.has(payloadType)) fmtp.set(payloadType, entry.config);
    }
    const connection = connectionOf(m.connection) ?? sessionConnection;
    const ptime = intIn(m.ptime, 1, 1000);
    const rtcp = m.rtcp as { port?: unknown } | undefined;
    const rtcpPort = intIn(rtcp?.port, 1, 65535);
    const cryptoLines = Array.isArray(m.crypto) ? (m.crypto as unknown[]) : [];
    if (cryptoLines.length > MAX_CRYPTO_LINES) return { ok: false, reason: `m= line ${index + 1} has more than ${MAX_CRYPTO_LINES} a=crypto lines` };
    const crypto = cryptoLines.map(readCryptoLine).filter((line): line is CryptoAttribute => line !== undefined);
    media.push({
      index,
      type: m.type.toLowerCase(),
      port,
      protocol: m.protocol,
      formats,
      rawFormats,
      rtpmap,
      fmtp,
      ...(connection?.address ? { address: connection.address, addressFamily: connection.family } : {}),
      nullAddress: connection?.nullAddress ?? false,
      direction: asDirection(m.direction) ?? sessionDirection,
      ...(ptime === undefined ? {} : { ptime }),
      ...(rtcpPort === undefined ? {} : { rtcpPort }),
      rtcpMux: m.rtcpMux === 'rtcp-mux',
      crypto,
      cryptoOffered: cryptoLines.length > 0 || hasInvalidCrypto(m.invalid),
      security: readSecurity(m, parsed),
    });
  }

  const origin = parsed.origin as Record<string, unknown> | undefined;
  const originAddress = typeof origin?.address === 'string' ? origin.address.slice(0, 256) : undefined;
  const sessionId = typeof origin?.sessionId === 'string' || typeof origin?.sessionId === 'number' ? String(origin.sessionId).slice(0, 64) : undefined;
  const sessionVersion =
    typeof origin?.sessionVersion === 'string' || typeof origin?.sessionVersion === 'number' ? String(origin.sessionVersion).slice(0, 64) : undefined;
  return { ok: true, session: { originAddress, sessionId, sessionVersion, media } };
}
