// SRTP for one media stream: our master key protects what we send (RTP and RTCP), the far end's
// checks and decrypts what it sends. A re-INVITE that repeats a key keeps that direction's running
// state (ROC, SRTCP index, replay window); a new key starts the direction afresh, as res_srtp
// replaces a stream's policy when the remote key changes.
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtcpReceiver, SrtcpSender } from './srtcp-context.ts';
import { SrtpReceiver, SrtpSender } from './srtp-context.ts';
import { sameMasterKey, type SrtpMasterKey } from './suites.ts';

export class SrtpSession implements MediaProtection {
  #local: SrtpMasterKey;
  #remote: SrtpMasterKey;
  #rtpOut: SrtpSender;
  #rtcpOut: SrtcpSender;
  #rtpIn: SrtpReceiver;
  #rtcpIn: SrtcpReceiver;

  /** `local`: the key we offered or answered with; `remote`: the far end's. */
  constructor(local: SrtpMasterKey, remote: SrtpMasterKey) {
    this.#local = local;
    this.#remote = remote;
    this.#rtpOut = new SrtpSender(local);
    this.#rtcpOut = new SrtcpSender(local);
    this.#rtpIn = new SrtpReceiver(remote);
    this.#rtcpIn = new SrtcpReceiver(remote);
  }

  /** Takes the keys of a new offer/answer; a direction whose key changed starts again. */
  rekey(local: SrtpMasterKey, remote: SrtpMasterKey): void {
    if (!sameMasterKey(local, this.#local)) {
      this.#local = local;
      this.#rtpOut = new SrtpSender(local);
      this.#rtcpOut = new SrtcpSender(local);
    }
    if (!sameMasterKey(remote, this.#remote)) {
      this.#remote = remote;
      this.#rtpIn = new SrtpReceiver(remote);
      this.#rtcpIn = new SrtcpReceiver(remote);
    }
  }

  protectRtp(packet: Uint8Array, length: number): number {
    return this.#rtpOut.protect(packet, length);
  }

  unprotectRtp(packet: Uint8Array, length: number): number {
    return this.#rtpIn.unprotect(packet, length);
  }

  protectRtcp(packet: Uint8Array, length: number): number {
    return this.#rtcpOut.protect(packet, length);
  }

  unprotectRtcp(packet: Uint8Array, length: number): number {
    return this.#rtcpIn.unprotect(packet, length);
  }
}
