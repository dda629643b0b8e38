// SRTP for one media stream: our master key protects what we send (RTP and RTCP), the far end's
// checks and decrypts what it sends. A re-INVITE that repeats a key keeps that direction's running
// state (ROC, SRTCP index, replay window); a new key starts the direction afresh, as res_srtp
// replaces a stream's policy when the remote key changes.
// Each direction's contexts (session keys derived, ciphers made) are built at its first packet: a
// session whose stream runs in a media worker is only the keys' holder on the main thread (the
// worker keeps a session of its own, keyed by the same master keys), and costs nothing more there.
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtcpReceiver, SrtcpSender } from './srtcp-context.ts';
import { SrtpReceiver, SrtpSender } from './srtp-context.ts';
import { sameMasterKey, type SrtpMasterKey } from './suites.ts';

export class SrtpSession implements MediaProtection {
  #local: SrtpMasterKey;
  #remote: SrtpMasterKey;
  #rtpOut: SrtpSender | undefined;
  #rtcpOut: SrtcpSender | undefined;
  #rtpIn: SrtpReceiver | undefined;
  #rtcpIn: SrtcpReceiver | undefined;

  /** `local`: the key we offered or answered with; `remote`: the far end's. */
  constructor(local: SrtpMasterKey, remote: SrtpMasterKey) {
    this.#local = local;
    this.#remote = remote;
  }

  /** The master keys in force (a media worker's stream is keyed with them). */
  get local(): SrtpMasterKey {
    return this.#local;
  }

  get remote(): SrtpMasterKey {
    return this.#remote;
  }

  /** Takes the keys of a new offer/answer; a direction whose key changed starts again. */
  rekey(local: SrtpMasterKey, remote: SrtpMasterKey): void {
    if (!sameMasterKey(local, this.#local)) {
      this.#local = local;
      this.#rtpOut = undefined;
      this.#rtcpOut = undefined;
    }
    if (!sameMasterKey(remote, this.#remote)) {
      this.#remote = remote;
      this.#rtpIn = undefined;
      this.#rtcpIn = undefined;
    }
  }

  protectRtp(packet: Uint8Array, length: number): number {
    return (this.#rtpOut ??= new SrtpSender(this.#local)).protect(packet, length);
  }

  unprotectRtp(packet: Uint8Array, length: number): number {
    return (this.#rtpIn ??= new SrtpReceiver(this.#remote)).unprotect(packet, length);
  }

  protectRtcp(packet: Uint8Array, length: number): number {
    return (this.#rtcpOut ??= new SrtcpSender(this.#local)).protect(packet, length);
  }

  unprotectRtcp(packet: Uint8Array, length: number): number {
    return (this.#rtcpIn ??= new SrtcpReceiver(this.#remote)).unprotect(packet, length);
  }
}
