// SRTP (RFC 3711 §3.1, §3.3) for one direction of one stream: the session keys derived from the
// master key, the packet index (ROC·65536 + SEQ) kept on sending and estimated on receiving
// (Appendix A), the replay window, and each packet encrypted or decrypted and authenticated in
// place in the caller's buffer. Packet: header | encrypted payload | MKI | authentication tag.
import { AesCounterMode, deriveSessionKey, LABEL } from './aes-cm.ts';
import { HmacSha1 } from './hmac-sha1.ts';
import { ReplayWindow } from './replay-window.ts';
import { AUTH_KEY_BYTES, SRTP_SUITES, type SrtpMasterKey } from './suites.ts';

/** Why unprotect refused a packet (a negative length). */
export const SRTP_MALFORMED = -1;
export const SRTP_AUTH_FAILED = -2;
export const SRTP_REPLAYED = -3;

/** Where the payload of the RTP packet in `packet[0, length)` starts; -1 when the header does not fit. */
export function rtpHeaderLength(packet: Uint8Array, length: number): number {
  if (length < 12 || packet[0] >> 6 !== 2) return -1;
  let end = 12 + (packet[0] & 0x0f) * 4;
  if (packet[0] & 0x10) {
    if (length < end + 4) return -1;
    end += 4 + ((packet[end + 2] << 8) | packet[end + 3]) * 4;
  }
  return end <= length ? end : -1;
}

/** The session keys of one master key for RTP (labels 0–2) or RTCP (3–5). */
export function sessionCrypto(master: SrtpMasterKey, rtcp: boolean): { cipher: AesCounterMode; auth: HmacSha1 } {
  const suite = SRTP_SUITES[master.suite];
  const key = master.keySalt.subarray(0, suite.keyBytes);
  const salt = master.keySalt.subarray(suite.keyBytes, suite.keyBytes + suite.saltBytes);
  const sessionKey = deriveSessionKey(key, salt, rtcp ? LABEL.rtcpKey : LABEL.rtpKey, suite.keyBytes);
  const sessionSalt = deriveSessionKey(key, salt, rtcp ? LABEL.rtcpSalt : LABEL.rtpSalt, suite.saltBytes);
  const authKey = deriveSessionKey(key, salt, rtcp ? LABEL.rtcpAuth : LABEL.rtpAuth, AUTH_KEY_BYTES);
  return { cipher: new AesCounterMode(sessionKey, sessionSalt), auth: new HmacSha1(authKey) };
}

/** Writes the MKI (`bytes` long, big-endian) at `packet[at]`. */
export function writeMki(packet: Uint8Array, at: number, value: number, bytes: number): void {
  for (let i = 0; i < bytes; i++) packet[at + i] = Math.floor(value / 2 ** (8 * (bytes - 1 - i))) & 0xff;
}

/**
 * The trailer of a protected packet (RFC 3711 §3.1, §3.4): the MKI, if the key has one, after the
 * authenticated portion `packet[0, authEnd)`, then the tag over that portion (and the ROC, for SRTP;
 * none for SRTCP, whose index is inside the portion). Returns the protected packet's length.
 */
export function appendTrailer(packet: Uint8Array, authEnd: number, mki: SrtpMasterKey['mki'], auth: HmacSha1, roc: number | undefined, tagBytes: number): number {
  let end = authEnd;
  if (mki) {
    writeMki(packet, end, mki.value, mki.bytes);
    end += mki.bytes;
  }
  auth.sign(packet, 0, authEnd, roc, packet, end, tagBytes);
  return end + tagBytes;
}

/** Whether `packet[at, at + bytes)` holds the MKI `value`. */
export function mkiMatches(packet: Uint8Array, at: number, value: number, bytes: number): boolean {
  let read = 0;
  for (let i = 0; i < bytes; i++) read = read * 256 + packet[at + i];
  return read === value;
}

/** Our sending side: protects the packets we send with our master key. */
export class SrtpSender {
  readonly #cipher: AesCounterMode;
  readonly #auth: HmacSha1;
  readonly #tagBytes: number;
  readonly #mki: SrtpMasterKey['mki'];
  #roc = 0;
  #lastSequence = -1;
  #ssrc: number | undefined;

  constructor(master: SrtpMasterKey) {
    ({ cipher: this.#cipher, auth: this.#auth } = sessionCrypto(master, false));
    this.#tagBytes = SRTP_SUITES[master.suite].rtpTagBytes;
    this.#mki = master.mki;
  }

  /** Bytes a packet grows by. */
  get overhead(): number {
    return this.#tagBytes + (this.#mki?.bytes ?? 0);
  }

  /**
   * Encrypts and signs the RTP packet in `packet[0, length)`; returns the SRTP packet's length
   * (the buffer must have `overhead` bytes free after it), or 0 when it is not a packet to send.
   */
  protect(packet: Uint8Array, length: number): number {
    const start = rtpHeaderLength(packet, length);
    if (start < 0 || length + this.overhead > packet.length) return 0;
    const sequence = (packet[2] << 8) | packet[3];
    const ssrc = ((packet[8] << 24) | (packet[9] << 16) | (packet[10] << 8) | packet[11]) >>> 0;
    if (ssrc !== this.#ssrc) {
      this.#ssrc = ssrc;
      this.#roc = 0;
      this.#lastSequence = -1;
    } else if (this.#lastSequence >= 0 && sequence < this.#lastSequence && this.#lastSequence - sequence > 0x8000) {
      // The sequence wrapped: the far end's estimate (Appendix A) moves to the next ROC too.
      this.#roc = (this.#roc + 1) >>> 0;
    }
    this.#lastSequence = sequence;
    if (!this.#cipher.apply(packet, start, length, ssrc, this.#roc * 0x10000 + sequence)) return 0;
    return appendTrailer(packet, length, this.#mki, this.#auth, this.#roc, this.#tagBytes);
  }
}

/** The far end's sending side as we receive it: checks and decrypts with its master key. */
export class SrtpReceiver {
  readonly #cipher: AesCounterMode;
  readonly #auth: HmacSha1;
  readonly #tagBytes: number;
  readonly #mki: SrtpMasterKey['mki'];
  readonly #replay = new ReplayWindow();
  #ssrc: number | undefined;
  #roc = 0;
  /** The highest sequence number taken in the current ROC (s_l of Appendix A). */
  #highest = 0;

  constructor(master: SrtpMasterKey) {
    ({ cipher: this.#cipher, auth: this.#auth } = sessionCrypto(master, false));
    this.#tagBytes = SRTP_SUITES[master.suite].rtpTagBytes;
    this.#mki = master.mki;
  }

  /**
   * Authenticates and decrypts the SRTP packet in `packet[0, length)` in place; returns the RTP
   * packet's length, or SRTP_MALFORMED / SRTP_AUTH_FAILED / SRTP_REPLAYED.
   */
  unprotect(packet: Uint8Array, length: number): number {
    const mkiBytes = this.#mki?.bytes ?? 0;
    const authEnd = length - this.#tagBytes - mkiBytes;
    const start = rtpHeaderLength(packet, authEnd);
    if (start < 0) return SRTP_MALFORMED;
    if (this.#mki && !mkiMatches(packet, authEnd, this.#mki.value, mkiBytes)) return SRTP_AUTH_FAILED;
    const sequence = (packet[2] << 8) | packet[3];
    const ssrc = ((packet[8] << 24) | (packet[9] << 16) | (packet[10] << 8) | packet[11]) >>> 0;
    // A new SSRC starts at ROC 0 (SDES signals none); it replaces the old one only once authentic.
    const known = ssrc === this.#ssrc;
    const roc = known ? this.#estimateRoc(sequence) : 0;
    const index = roc * 0x10000 + sequence;
    if (known && !this.#replay.allows(index)) return SRTP_REPLAYED;
    if (!this.#auth.verify(packet, 0, authEnd, roc >>> 0, authEnd + mkiBytes, this.#tagBytes)) return SRTP_AUTH_FAILED;
    if (!this.#cipher.apply(packet, start, authEnd, ssrc, index)) return SRTP_MALFORMED;
    if (!known) {
      this.#ssrc = ssrc;
      this.#roc = 0;
      this.#highest = sequence;
      this.#replay.reset();
    } else if (roc === this.#roc + 1) {
      this.#roc = roc;
      this.#highest = sequence;
    } else if (roc === this.#roc && sequence > this.#highest) {
      this.#highest = sequence;
    }
    this.#replay.take(index);
    return authEnd;
  }

  /** RFC 3711 Appendix A: the ROC the sender most likely used for `sequence`. */
  #estimateRoc(sequence: number): number {
    const highest = this.#highest;
    if (highest < 0x8000) return sequence - highest > 0x8000 && this.#roc > 0 ? this.#roc - 1 : this.#roc;
    return highest - 0x8000 > sequence ? this.#roc + 1 : this.#roc;
  }
}
