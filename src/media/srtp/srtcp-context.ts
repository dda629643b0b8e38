// SRTCP (RFC 3711 §3.4) for one direction: the first 8 bytes (header and sender SSRC) stay clear,
// the rest of the compound packet is encrypted, then come the E flag with the 31-bit SRTCP index
// (authenticated), the MKI and the 80-bit tag. In place, in the caller's buffer.
import type { AesCounterMode } from './aes-cm.ts';
import type { HmacSha1 } from './hmac-sha1.ts';
import { ReplayWindow } from './replay-window.ts';
import { appendTrailer, mkiMatches, sessionCrypto, SRTP_AUTH_FAILED, SRTP_MALFORMED, SRTP_REPLAYED } from './srtp-context.ts';
import { SRTP_SUITES, type SrtpMasterKey } from './suites.ts';

const CLEAR_BYTES = 8;
const INDEX_BYTES = 4;
const MAX_INDEX = 0x7fff_ffff;

export class SrtcpSender {
  readonly #cipher: AesCounterMode;
  readonly #auth: HmacSha1;
  readonly #tagBytes: number;
  readonly #mki: SrtpMasterKey['mki'];
  /** The next SRTCP index; the first packet carries 1, as libsrtp sends it (any start is accepted). */
  #index = 1;

  constructor(master: SrtpMasterKey) {
    ({ cipher: this.#cipher, auth: this.#auth } = sessionCrypto(master, true));
    this.#tagBytes = SRTP_SUITES[master.suite].rtcpTagBytes;
    this.#mki = master.mki;
  }

  get overhead(): number {
    return INDEX_BYTES + (this.#mki?.bytes ?? 0) + this.#tagBytes;
  }

  /** Encrypts and signs the compound RTCP packet in `packet[0, length)`; returns its new length, 0 when it cannot be sent. */
  protect(packet: Uint8Array, length: number): number {
    // RFC 3711 §9.2: the master key may protect 2^31 SRTCP packets; after that nothing more is sent with it.
    if (length < CLEAR_BYTES || length + this.overhead > packet.length || this.#index > MAX_INDEX) return 0;
    const ssrc = ((packet[4] << 24) | (packet[5] << 16) | (packet[6] << 8) | packet[7]) >>> 0;
    const index = this.#index++;
    if (!this.#cipher.apply(packet, CLEAR_BYTES, length, ssrc, index)) return 0;
    packet[length] = 0x80 | (index >>> 24);
    packet[length + 1] = (index >>> 16) & 0xff;
    packet[length + 2] = (index >>> 8) & 0xff;
    packet[length + 3] = index & 0xff;
    return appendTrailer(packet, length + INDEX_BYTES, this.#mki, this.#auth, undefined, this.#tagBytes);
  }
}

export class SrtcpReceiver {
  readonly #cipher: AesCounterMode;
  readonly #auth: HmacSha1;
  readonly #tagBytes: number;
  readonly #mki: SrtpMasterKey['mki'];
  readonly #replay = new ReplayWindow();
  #ssrc: number | undefined;

  constructor(master: SrtpMasterKey) {
    ({ cipher: this.#cipher, auth: this.#auth } = sessionCrypto(master, true));
    this.#tagBytes = SRTP_SUITES[master.suite].rtcpTagBytes;
    this.#mki = master.mki;
  }

  /** Authenticates and decrypts in place; returns the RTCP packet's length, or a negative SRTP_* reason. */
  unprotect(packet: Uint8Array, length: number): number {
    const mkiBytes = this.#mki?.bytes ?? 0;
    const authEnd = length - this.#tagBytes - mkiBytes;
    const end = authEnd - INDEX_BYTES;
    if (end < CLEAR_BYTES || packet[0] >> 6 !== 2) return SRTP_MALFORMED;
    if (this.#mki && !mkiMatches(packet, authEnd, this.#mki.value, mkiBytes)) return SRTP_AUTH_FAILED;
    const ssrc = ((packet[4] << 24) | (packet[5] << 16) | (packet[6] << 8) | packet[7]) >>> 0;
    const encrypted = (packet[end] & 0x80) !== 0;
    const index = (((packet[end] & 0x7f) << 24) | (packet[end + 1] << 16) | (packet[end + 2] << 8) | packet[end + 3]) >>> 0;
    const known = ssrc === this.#ssrc;
    if (known && !this.#replay.allows(index)) return SRTP_REPLAYED;
    if (!this.#auth.verify(packet, 0, authEnd, undefined, authEnd + mkiBytes, this.#tagBytes)) return SRTP_AUTH_FAILED;
    if (encrypted && !this.#cipher.apply(packet, CLEAR_BYTES, end, ssrc, index)) return SRTP_MALFORMED;
    if (!known) {
      this.#ssrc = ssrc;
      this.#replay.reset();
    }
    this.#replay.take(index);
    return end;
  }
}
