// The media socket of a WebRTC call whose packets are handled on the main thread: one UDP port
// carries STUN (ICE-lite checks and consent), DTLS (the handshake that keys SRTP, RFC 5763/5764) and
// SRTP/SRTCP multiplexed (rtcp-mux, BUNDLE of one audio stream), told apart by their first byte (RFC
// 7983, webrtc-demux.ts). The RTP stream sees a socket of RTP only, and this socket is also its
// MediaProtection: the SRTP module's SrtpSession, keyed by what the handshake (dtls-keying.ts)
// exported (AES_CM_128_HMAC_SHA1_80), protects and checks every packet in the stream's buffers.
// Nothing is sent before the browser's checks chose the pair and DTLS gave the keys; nothing is read
// that did not authenticate; sending stops when consent lapses (RFC 7675). A call whose stream runs
// in a media worker has the same demultiplexing there (workers/worker-secure-socket.ts).
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { MediaMessageListener, MediaSocket } from '../rtp/media-socket.ts';
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtpSession } from '../srtp/session.ts';
import type { DtlsIdentity } from './dtls-identity.ts';
import { DtlsKeying, type RemoteSecurity, type SecureMediaOptions } from './dtls-keying.ts';
import { IceLiteResponder, looksLikeStun } from './ice-lite.ts';
import { looksLikeDtls, looksLikeRtp } from './webrtc-demux.ts';

export type { RemoteSecurity, SecureMediaOptions } from './dtls-keying.ts';

export class SecureMediaSocket implements MediaSocket, MediaProtection {
  readonly ice = new IceLiteResponder();
  readonly #raw: dgram.Socket;
  readonly #events = new EventEmitter();
  readonly #keying: DtlsKeying;
  #srtp: SrtpSession | undefined;
  #closed = false;
  /** Packets dropped here: DTLS or RTP from elsewhere than the checked pair, or not RTP at all. */
  dropped = 0;

  constructor(raw: dgram.Socket, identity: DtlsIdentity, options: SecureMediaOptions = {}) {
    this.#raw = raw;
    this.#keying = new DtlsKeying(identity, options, (record) => this.#sendRecord(record), (keys) => {
      this.#srtp = new SrtpSession(keys.local, keys.remote);
    });
    raw.on('message', this.#onPacket);
    raw.on('error', (error) => this.#events.emit('error', error));
  }

  /** Our certificate's fingerprint, for a=fingerprint. */
  get fingerprint(): string {
    return this.#keying.fingerprint;
  }

  /** DTLS finished and SRTP is keyed. */
  get secured(): boolean {
    return this.#srtp !== undefined;
  }

  /**
   * What the far end's SDP said (the offer we answer, or the answer to our offer). The DTLS role
   * is settled by then; a renegotiation that keeps it changes nothing.
   */
  configureRemote(remote: RemoteSecurity): void {
    this.ice.setRemote(remote.iceUfrag);
    if (this.#closed) return;
    this.#keying.configureRemote(remote);
  }

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

  /** SRTP or SRTCP the stream protected: sent to the checked pair while consent is fresh (the stream's idea of the address is not used). */
  send(message: Buffer, offset: number, length: number, _port: number, _address: string, callback?: (error: Error | null) => void): void {
    const pair = this.ice.selected;
    if (!this.#srtp || !pair || !this.ice.consented() || this.#closed) {
      callback?.(null);
      return;
    }
    this.#raw.send(message, offset, length, pair.port, pair.address, callback);
  }

  // ---- MediaProtection (what the stream and its RTCP call on every packet): nothing before the keys

  protectRtp(packet: Uint8Array, length: number): number {
    return this.#srtp ? this.#srtp.protectRtp(packet, length) : 0;
  }

  unprotectRtp(packet: Uint8Array, length: number): number {
    return this.#srtp ? this.#srtp.unprotectRtp(packet, length) : -1;
  }

  protectRtcp(packet: Uint8Array, length: number): number {
    return this.#srtp ? this.#srtp.protectRtcp(packet, length) : 0;
  }

  unprotectRtcp(packet: Uint8Array, length: number): number {
    return this.#srtp ? this.#srtp.unprotectRtcp(packet, length) : -1;
  }

  close(callback?: () => void): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#keying.close();
    this.#raw.off('message', this.#onPacket);
    try {
      this.#raw.close(callback);
    } catch {
      callback?.();
    }
  }

  // ---- receiving

  readonly #onPacket = (packet: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.#closed) return;
    if (looksLikeStun(packet)) {
      const hadPair = this.ice.selected !== undefined;
      const response = this.ice.handle(packet, rinfo.address, rinfo.port);
      if (response) this.#raw.send(response, rinfo.port, rinfo.address);
      if (!hadPair && this.ice.selected) this.#keying.pairChecked();
      return;
    }
    const pair = this.ice.selected;
    const fromPair = pair !== undefined && pair.address === rinfo.address && pair.port === rinfo.port;
    if (looksLikeDtls(packet)) {
      if (!fromPair) return void (this.dropped += 1);
      this.#keying.receive(packet);
      return;
    }
    if (!looksLikeRtp(packet) || !fromPair) return void (this.dropped += 1);
    // SRTP or SRTCP: the stream unprotects it through this socket's MediaProtection (and counts what fails).
    this.#events.emit('message', packet, rinfo);
  };

  /** A DTLS record to the checked pair. */
  #sendRecord(record: Buffer): Promise<void> {
    const pair = this.ice.selected;
    if (!pair || this.#closed) return Promise.resolve();
    return new Promise<void>((resolve) => this.#raw.send(record, pair.port, pair.address, () => resolve()));
  }
}
