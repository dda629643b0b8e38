// The media socket of a WebRTC call whose stream runs in a media worker (issue 25): the worker owns
// the call's UDP port and tells what arrives apart by its first byte (RFC 7983). STUN checks are
// answered here (ICE-lite, with the credentials the main thread put in our SDP); SRTP and SRTCP go
// to the stream, which protects and checks them through this socket (its MediaProtection) once the
// keys came; DTLS records, a handful per call, go to the main thread, whose handshake
// (webrtc/dtls-keying.ts) sends its own back to be sent from here, and sends the exported keys when
// it connects. The pair the far end checked, and its consent (RFC 7675) lapsing or coming back, are
// told to the main thread as they change; sending stops here while consent has lapsed. What crosses
// is bounded: records above a size or beyond a rate are dropped.
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { MediaMessageListener, MediaSocket } from '../rtp/media-socket.ts';
import type { MediaProtection } from '../rtp/protection.ts';
import type { SrtpSession } from '../srtp/session.ts';
import { IceLiteResponder, looksLikeStun, type IceCredentials, type SelectedPair } from '../webrtc/ice-lite.ts';
import { looksLikeDtls, looksLikeRtp } from '../webrtc/webrtc-demux.ts';
import { keyedSession, type WorkerSrtpKeys } from './worker-srtp.ts';

/** A DTLS datagram larger than this is not one a browser sends (they fragment flights to the path MTU). */
export const MAX_DTLS_RECORD_BYTES = 8_192;
/** DTLS records forwarded to the main thread per window and call: a handshake and its retransmissions need far fewer. */
const DTLS_RECORDS_PER_WINDOW = 32;
const DTLS_WINDOW_MS = 1_000;
/** ice-ufrag and ice-pwd longer than this are not ours (RFC 8839 allows 256; we make 8 and 24). */
const MAX_ICE_CREDENTIAL_CHARS = 256;

/** What the socket tells the main thread. */
export interface SecureSocketReports {
  /** A DTLS record from the checked pair (a copy of its own). */
  dtls(record: Uint8Array): void;
  /** The checked pair, and whether its consent is fresh, changed. */
  ice(selected: SelectedPair | undefined, consented: boolean): void;
}

/** ICE credentials as they arrived in an open message: checked like anything that crosses. */
export function isIceCredentials(value: unknown): value is IceCredentials {
  if (typeof value !== 'object' || value === null) return false;
  const { ufrag, pwd } = value as Record<string, unknown>;
  return typeof ufrag === 'string' && typeof pwd === 'string' && ufrag.length > 0 && pwd.length > 0 && ufrag.length <= MAX_ICE_CREDENTIAL_CHARS && pwd.length <= MAX_ICE_CREDENTIAL_CHARS;
}

export class WorkerSecureSocket implements MediaSocket, MediaProtection {
  readonly ice: IceLiteResponder;
  readonly #raw: dgram.Socket;
  readonly #reports: SecureSocketReports;
  readonly #events = new EventEmitter();
  #srtp: SrtpSession | undefined;
  #closed = false;
  /** What the main thread was last told of the pair and its consent. */
  #toldPair: SelectedPair | undefined;
  #toldConsent = false;
  #windowStart = 0;
  #windowRecords = 0;
  /** Packets dropped here: from elsewhere than the checked pair, not RTP, or DTLS beyond the bounds. */
  dropped = 0;

  /** `consentTimeoutMs`: RFC 7675's 30 s (ice-lite.ts) unless a test needs it shorter. */
  constructor(raw: dgram.Socket, credentials: IceCredentials, reports: SecureSocketReports, consentTimeoutMs?: number) {
    this.#raw = raw;
    this.ice = new IceLiteResponder(credentials, consentTimeoutMs);
    this.#reports = reports;
    raw.on('message', this.#onPacket);
    raw.on('error', (error) => this.#events.emit('error', error));
  }

  /** The far end's a=ice-ufrag (from the main thread's offer/answer). */
  setRemoteUfrag(ufrag: string | undefined): void {
    this.ice.setRemote(typeof ufrag === 'string' && ufrag.length <= MAX_ICE_CREDENTIAL_CHARS ? ufrag : undefined);
  }

  /** The keys the handshake exported; throws on keys that are not keys (the stream then closes). */
  key(keys: WorkerSrtpKeys): void {
    this.#srtp = keyedSession(undefined, keys);
  }

  /** A DTLS record of the main thread's handshake, sent to the checked pair. */
  sendRecord(record: Uint8Array): void {
    const pair = this.ice.selected;
    if (this.#closed || !pair || !(record instanceof Uint8Array) || record.length === 0 || record.length > MAX_DTLS_RECORD_BYTES) return;
    this.#raw.send(record, pair.port, pair.address);
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

  /** SRTP or SRTCP the stream protected: to the checked pair while consent is fresh (RFC 7675), else nothing. */
  send(message: Buffer, offset: number, length: number, _port: number, _address: string, callback?: (error: Error | null) => void): void {
    const pair = this.ice.selected;
    const consented = this.ice.consented();
    if (consented !== this.#toldConsent) this.#tell();
    if (!this.#srtp || !pair || !consented || this.#closed) {
      callback?.(null);
      return;
    }
    this.#raw.send(message, offset, length, pair.port, pair.address, callback);
  }

  // ---- MediaProtection: nothing before the keys

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
      const response = this.ice.handle(packet, rinfo.address, rinfo.port);
      if (response) this.#raw.send(response, rinfo.port, rinfo.address);
      const pair = this.ice.selected;
      const told = this.#toldPair;
      const moved = pair?.address !== told?.address || pair?.port !== told?.port;
      if (moved || this.ice.consented() !== this.#toldConsent) this.#tell();
      return;
    }
    const pair = this.ice.selected;
    const fromPair = pair !== undefined && pair.address === rinfo.address && pair.port === rinfo.port;
    if (looksLikeDtls(packet)) {
      if (!fromPair || packet.length > MAX_DTLS_RECORD_BYTES || !this.#withinRecordBudget()) return void (this.dropped += 1);
      // A copy of its own: the message would otherwise clone whatever memory the packet is a view of.
      this.#reports.dtls(new Uint8Array(packet));
      return;
    }
    if (!looksLikeRtp(packet) || !fromPair) return void (this.dropped += 1);
    this.#events.emit('message', packet, rinfo);
  };

  #withinRecordBudget(): boolean {
    const now = performance.now();
    if (now - this.#windowStart >= DTLS_WINDOW_MS) {
      this.#windowStart = now;
      this.#windowRecords = 0;
    }
    this.#windowRecords += 1;
    return this.#windowRecords <= DTLS_RECORDS_PER_WINDOW;
  }

  #tell(): void {
    const pair = this.ice.selected;
    this.#toldPair = pair;
    this.#toldConsent = this.ice.consented();
    this.#reports.ice(pair ? { address: pair.address, port: pair.port } : undefined, this.#toldConsent);
  }
}
