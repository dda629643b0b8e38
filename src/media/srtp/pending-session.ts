// The SRTP of a stream whose keys come after it opens (DTLS-SRTP: the handshake runs over the
// stream's own port and exports the keys once it connects). Until then nothing is protected (a
// length of 0: the stream sends nothing) and nothing is accepted (negative: the stream drops and
// counts it), so no packet leaves or arrives in the clear. Keys that come again re-key the session by
// SrtpSession.rekey's rules, as an SDES offer/answer does. Both WebRTC sockets — the main thread's and
// a media worker's (webrtc/checked-pair-socket.ts) — hold one.
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtpSession } from './session.ts';
import type { SrtpMasterKey } from './suites.ts';

export class PendingSrtpSession implements MediaProtection {
  #session: SrtpSession | undefined;

  /** The keys came: packets are protected and checked from now on. */
  get keyed(): boolean {
    return this.#session !== undefined;
  }

  /** `local` protects what we send, `remote` checks what the far end sends. */
  key(local: SrtpMasterKey, remote: SrtpMasterKey): void {
    if (this.#session) this.#session.rekey(local, remote);
    else this.#session = new SrtpSession(local, remote);
  }

  protectRtp(packet: Uint8Array, length: number): number {
    return this.#session ? this.#session.protectRtp(packet, length) : 0;
  }

  unprotectRtp(packet: Uint8Array, length: number): number {
    return this.#session ? this.#session.unprotectRtp(packet, length) : -1;
  }

  protectRtcp(packet: Uint8Array, length: number): number {
    return this.#session ? this.#session.protectRtcp(packet, length) : 0;
  }

  unprotectRtcp(packet: Uint8Array, length: number): number {
    return this.#session ? this.#session.unprotectRtcp(packet, length) : -1;
  }
}
