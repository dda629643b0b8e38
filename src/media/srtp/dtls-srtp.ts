// SRTP (RFC 3711) for media keyed by a DTLS handshake (RFC 5764): the protect/unprotect seam the
// WebRTC socket uses, implemented with werift-rtp's SRTP and SRTCP sessions (pure TypeScript,
// maintained with the werift WebRTC stack). Another SRTP engine (SDES's) can stand behind the same
// SrtpTransform interface: the socket only knows the interface.
import { RtpPacket, SrtcpSession, SrtpSession } from 'werift-rtp';

/** Protection profiles negotiated over DTLS (RFC 5764 §4.1.2, RFC 7714). */
export const SRTP_AES128_CM_HMAC_SHA1_80 = 1 as const;
export const SRTP_AEAD_AES_128_GCM = 7 as const;
export type SrtpProfileId = typeof SRTP_AES128_CM_HMAC_SHA1_80 | typeof SRTP_AEAD_AES_128_GCM;

export interface SrtpKeys {
  readonly profile: SrtpProfileId;
  readonly localKey: Buffer;
  readonly localSalt: Buffer;
  readonly remoteKey: Buffer;
  readonly remoteSalt: Buffer;
}

/** Encrypts what we send and authenticates and decrypts what arrives; undefined for a packet that fails. */
export interface SrtpTransform {
  protectRtp(packet: Buffer): Buffer;
  unprotectRtp(packet: Buffer): Buffer | undefined;
  protectRtcp(packet: Buffer): Buffer;
  unprotectRtcp(packet: Buffer): Buffer | undefined;
}

export function createSrtpTransform(keys: SrtpKeys): SrtpTransform {
  const sessionKeys = { localMasterKey: keys.localKey, localMasterSalt: keys.localSalt, remoteMasterKey: keys.remoteKey, remoteMasterSalt: keys.remoteSalt };
  const rtp = new SrtpSession({ keys: sessionKeys, profile: keys.profile });
  const rtcp = new SrtcpSession({ keys: sessionKeys, profile: keys.profile });
  return {
    protectRtp(packet) {
      const parsed = RtpPacket.deSerialize(packet);
      return rtp.encrypt(parsed.payload, parsed.header);
    },
    unprotectRtp(packet) {
      try {
        return rtp.decrypt(packet);
      } catch {
        // Failed authentication, a replay or garbage: dropped like any stranger's packet.
        return undefined;
      }
    },
    protectRtcp(packet) {
      return rtcp.encrypt(packet);
    },
    unprotectRtcp(packet) {
      try {
        return rtcp.decrypt(packet);
      } catch {
        return undefined;
      }
    },
  };
}
