// What both WebRTC media sockets share — the main thread's (secure-media-socket.ts, DTLS handshake
// in place) and a media worker's (workers/worker-secure-socket.ts, DTLS records carried to the main
// thread): one UDP port carries STUN, DTLS and SRTP/SRTCP multiplexed (rtcp-mux, BUNDLE of one audio
// stream), told apart by their first byte (RFC 7983, webrtc-demux.ts). STUN checks are answered here
// (ICE-lite); DTLS and media are taken only from the pair the far end checked; what the stream sends
// goes to that pair only while its consent is fresh (RFC 7675) and only once SRTP is keyed. The RTP
// stream sees a socket of RTP only, and this socket is also its MediaProtection (a PendingSrtpSession:
// nothing protected or accepted before the keys). What differs between the two — what a check and a
// DTLS record lead to, where the keys come from — is the subclass's.
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { MediaMessageListener, MediaSocket } from '../rtp/media-socket.ts';
import type { MediaProtection } from '../rtp/protection.ts';
import { PendingSrtpSession } from '../srtp/pending-session.ts';
import type { SrtpMasterKey } from '../srtp/suites.ts';
import { looksLikeStun, type IceLiteResponder, type SelectedPair } from './ice-lite.ts';
import { looksLikeDtls, looksLikeRtp } from './webrtc-demux.ts';

export abstract class CheckedPairSocket implements MediaSocket, MediaProtection {
  readonly ice: IceLiteResponder;
  readonly #raw: dgram.Socket;
  readonly #events = new EventEmitter();
  readonly #srtp = new PendingSrtpSession();
  #closed = false;
  /** Packets dropped here: from elsewhere than the checked pair, not RTP, or DTLS the subclass refused. */
  dropped = 0;

  protected constructor(raw: dgram.Socket, ice: IceLiteResponder) {
    this.#raw = raw;
    this.ice = ice;
    raw.on('message', this.#onPacket);
    raw.on('error', (error) => this.#events.emit('error', error));
  }

  /** DTLS finished and SRTP is keyed. */
  get secured(): boolean {
    return this.#srtp.keyed;
  }

  protected get closed(): boolean {
    return this.#closed;
  }

  /** The keys the handshake exported: SRTP protects and checks every packet from now on. */
  protected installKeys(local: SrtpMasterKey, remote: SrtpMasterKey): void {
    this.#srtp.key(local, remote);
  }

  /** A DTLS record of ours to the checked pair; `sent` runs when it left, or at once when there is nowhere to send it. */
  protected sendToPair(record: Uint8Array, sent?: () => void): void {
    const pair = this.ice.selected;
    if (this.#closed || !pair) return void sent?.();
    this.#raw.send(record, pair.port, pair.address, sent && (() => sent()));
  }

  /** A STUN check was answered; `previous` is the pair that was selected before it. */
  protected abstract onChecked(previous: SelectedPair | undefined): void;

  /** A DTLS record from the checked pair; false drops (and counts) it. */
  protected abstract onDtlsRecord(record: Buffer): boolean;

  /** Every send asks the consent first; a subclass that reports it watches it change here. */
  protected onSendConsent(_consented: boolean): void {}

  /** Before the port closes. */
  protected onClose(): void {}

  // ---- MediaSocket (what the RTP stream calls)

  address(): AddressInfo {
    return this.#raw.address();
  }

  on(event: 'message', listener: MediaMessageListener): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'message' | 'error', listener: MediaMessageListener | ((error: Error) => void)): this {
    this.#events.on(event, listener);
    return this;
  }

  off(event: 'message', listener: MediaMessageListener): this {
    this.#events.off(event, listener);
    return this;
  }

  /** SRTP or SRTCP the stream protected: to the checked pair while consent is fresh, else nothing (the stream's idea of the address is not used). */
  send(message: Buffer, offset: number, length: number, _port: number, _address: string, callback?: (error: Error | null) => void): void {
    const pair = this.ice.selected;
    const consented = this.ice.consented();
    this.onSendConsent(consented);
    if (!this.#srtp.keyed || !pair || !consented || this.#closed) {
      callback?.(null);
      return;
    }
    this.#raw.send(message, offset, length, pair.port, pair.address, callback);
  }

  close(callback?: () => void): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onClose();
    this.#raw.off('message', this.#onPacket);
    try {
      this.#raw.close(callback);
    } catch {
      callback?.();
    }
  }

  // ---- MediaProtection (what the stream and its RTCP call on every packet)

  protectRtp(packet: Uint8Array, length: number): number {
    return this.#srtp.protectRtp(packet, length);
  }

  unprotectRtp(packet: Uint8Array, length: number): number {
    return this.#srtp.unprotectRtp(packet, length);
  }

  protectRtcp(packet: Uint8Array, length: number): number {
    return this.#srtp.protectRtcp(packet, length);
  }

  unprotectRtcp(packet: Uint8Array, length: number): number {
    return this.#srtp.unprotectRtcp(packet, length);
  }

  // ---- receiving

  readonly #onPacket = (packet: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.#closed) return;
    if (looksLikeStun(packet)) {
      const previous = this.ice.selected;
      const response = this.ice.handle(packet, rinfo.address, rinfo.port);
      if (response) this.#raw.send(response, rinfo.port, rinfo.address);
      this.onChecked(previous);
      return;
    }
    const pair = this.ice.selected;
    const fromPair = pair !== undefined && pair.address === rinfo.address && pair.port === rinfo.port;
    if (looksLikeDtls(packet)) {
      if (!fromPair || !this.onDtlsRecord(packet)) this.dropped += 1;
      return;
    }
    if (!looksLikeRtp(packet) || !fromPair) return void (this.dropped += 1);
    // SRTP or SRTCP: the stream unprotects it through this socket's MediaProtection (and counts what fails).
    this.#events.emit('message', packet, rinfo);
  };
}
