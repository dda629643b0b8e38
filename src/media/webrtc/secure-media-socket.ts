// The media socket of a WebRTC call: one UDP port carries STUN (ICE-lite checks and consent), DTLS
// (the handshake that keys SRTP, RFC 5763/5764) and SRTP/SRTCP multiplexed (rtcp-mux, BUNDLE of one
// audio stream), told apart by their first byte (RFC 7983). The RTP stream sees a socket of RTP
// only, and this socket is also its MediaProtection: the SRTP module's SrtpSession, keyed by what
// the handshake exported (AES_CM_128_HMAC_SHA1_80), protects and checks every packet in the
// stream's buffers. Nothing is sent before the browser's checks chose the pair and DTLS gave the
// keys; nothing is read that did not authenticate; sending stops when consent lapses (RFC 7675).
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { DtlsClient, DtlsServer, type DtlsSocket } from 'werift-dtls/lib/dtls/src/index.js';
import type { MediaMessageListener, MediaSocket } from '../rtp/media-socket.ts';
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtpSession } from '../srtp/session.ts';
import { SRTP_SUITES } from '../srtp/suites.ts';
import { derFingerprint, type DtlsIdentity } from './dtls-identity.ts';
import { IceLiteResponder, looksLikeStun } from './ice-lite.ts';

/** DTLS records start with a content type of 20..63 (RFC 7983 §7). */
function looksLikeDtls(packet: Buffer): boolean {
  return packet.length >= 13 && packet[0]! >= 20 && packet[0]! <= 63;
}

/** RTP and RTCP start with version 2: a first byte of 128..191. */
function looksLikeRtp(packet: Buffer): boolean {
  return packet.length >= 12 && packet[0]! >= 128 && packet[0]! <= 191;
}

/** DTLS records kept while the far end's SDP is not read yet (its ClientHello may beat the answer). */
const MAX_EARLY_RECORDS = 16;
/** DTLS-SRTP protection profile SRTP_AES128_CM_HMAC_SHA1_80 (RFC 5764 §4.1.2): what the SRTP module and every browser have. */
const SRTP_AES128_CM_HMAC_SHA1_80 = 1 as const;

/** A handshake that has not finished in this time fails the media. */
const HANDSHAKE_TIMEOUT_MS = 20_000;

export interface RemoteSecurity {
  /** The far end's a=ice-ufrag. */
  readonly iceUfrag?: string;
  /** The far end's a=fingerprint: its certificate must hash to this (dtls_verify). */
  readonly fingerprint?: { readonly algorithm: string; readonly value: string };
  /** Our DTLS role: `client` when we are setup:active, `server` when passive. */
  readonly role: 'client' | 'server';
}

export interface SecureMediaOptions {
  /** Refuse a far end whose certificate does not match its SDP fingerprint (dtls_verify=fingerprint|yes; default true). */
  readonly verifyFingerprint?: boolean;
  /** Told once when the media cannot be secured (handshake failed, fingerprint mismatch). */
  readonly onFailure?: (reason: string) => void;
  /** Ms the handshake may take from the first ICE check (default 20 s). */
  readonly handshakeTimeoutMs?: number;
}

export class SecureMediaSocket implements MediaSocket, MediaProtection {
  readonly ice = new IceLiteResponder();
  readonly #raw: dgram.Socket;
  readonly #identity: DtlsIdentity;
  readonly #options: SecureMediaOptions;
  readonly #events = new EventEmitter();
  #remote: RemoteSecurity | undefined;
  #dtls: DtlsSocket | undefined;
  #srtp: SrtpSession | undefined;
  #early: Array<{ packet: Buffer; address: string; port: number }> = [];
  #handshakeTimer: NodeJS.Timeout | undefined;
  #failed = false;
  #closed = false;
  /** Packets dropped here: DTLS or RTP from elsewhere than the checked pair, or not RTP at all. */
  dropped = 0;

  constructor(raw: dgram.Socket, identity: DtlsIdentity, options: SecureMediaOptions = {}) {
    this.#raw = raw;
    this.#identity = identity;
    this.#options = options;
    raw.on('message', this.#onPacket);
    raw.on('error', (error) => this.#events.emit('error', error));
  }

  /** Our certificate's fingerprint, for a=fingerprint. */
  get fingerprint(): string {
    return this.#identity.fingerprint;
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
    const previous = this.#remote;
    this.#remote = remote;
    if (previous || this.#closed) return;
    this.#startDtls(remote.role);
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
    clearTimeout(this.#handshakeTimer);
    try {
      this.#dtls?.close();
    } catch {
      // a handshake cut short: nothing to say goodbye to
    }
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
      if (!hadPair && this.ice.selected && this.#dtls) this.#pairChecked(this.#dtls);
      return;
    }
    const pair = this.ice.selected;
    const fromPair = pair !== undefined && pair.address === rinfo.address && pair.port === rinfo.port;
    if (looksLikeDtls(packet)) {
      if (!fromPair) return void (this.dropped += 1);
      if (this.#dtls) this.#dtlsTransport.onData(packet, [rinfo.address, rinfo.port]);
      else if (this.#early.length < MAX_EARLY_RECORDS) this.#early.push({ packet, address: rinfo.address, port: rinfo.port });
      return;
    }
    if (!looksLikeRtp(packet) || !fromPair) return void (this.dropped += 1);
    // SRTP or SRTCP: the stream unprotects it through this socket's MediaProtection (and counts what fails).
    this.#events.emit('message', packet, rinfo);
  };

  // ---- DTLS

  /** What werift's DTLS reads from and writes to: records go to and come from the checked pair. */
  readonly #dtlsTransport = {
    type: 'udp',
    closed: false,
    onData: (_data: Buffer, _address: readonly [string, number]): void => undefined,
    send: async (data: Buffer): Promise<void> => {
      const pair = this.ice.selected;
      if (!pair || this.#closed) return;
      await new Promise<void>((resolve) => this.#raw.send(data, pair.port, pair.address, () => resolve()));
    },
    close: async (): Promise<void> => undefined,
    get address(): AddressInfo {
      return { address: '0.0.0.0', family: 'IPv4', port: 0 };
    },
  };

  #startDtls(role: 'client' | 'server'): void {
    const options = {
      transport: this.#dtlsTransport,
      cert: this.#identity.certPem,
      key: this.#identity.keyPem,
      signatureHash: this.#identity.signatureHash,
      srtpProfiles: [SRTP_AES128_CM_HMAC_SHA1_80],
      // RFC 5763 §5: the far end must present its certificate, whose fingerprint its SDP gave.
      certificateRequest: true,
      extendedMasterSecret: true,
    };
    const dtls = role === 'server' ? new DtlsServer(options) : new DtlsClient(options);
    this.#dtls = dtls;
    dtls.onConnect.subscribe(() => this.#connected(dtls));
    dtls.onError.subscribe((error: Error) => this.#fail(`DTLS: ${error.message}`));
    for (const early of this.#early.splice(0)) this.#dtlsTransport.onData(early.packet, [early.address, early.port]);
    if (this.ice.selected) this.#pairChecked(dtls);
  }

  /**
   * The browser checked a pair, so the handshake can run now: as the client we start it, and either
   * way it has HANDSHAKE_TIMEOUT_MS to finish (not counted while the call rings without our SDP).
   */
  #pairChecked(dtls: DtlsSocket): void {
    if (dtls instanceof DtlsClient) dtls.connect().catch((error: unknown) => this.#fail(`DTLS: ${error instanceof Error ? error.message : String(error)}`));
    this.#handshakeTimer = setTimeout(() => {
      if (!this.#srtp) this.#fail('DTLS handshake did not finish');
    }, this.#options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS);
    this.#handshakeTimer.unref();
  }

  #connected(dtls: DtlsSocket): void {
    const expected = this.#remote?.fingerprint;
    if (this.#options.verifyFingerprint !== false) {
      const certificate = dtls.remoteCertificate;
      const actual = certificate && expected ? derFingerprint(certificate, expected.algorithm) : undefined;
      if (!actual || actual !== expected!.value.toUpperCase()) return this.#fail('the far end\'s DTLS certificate does not match its SDP fingerprint');
    }
    if (dtls.srtp.srtpProfile !== SRTP_AES128_CM_HMAC_SHA1_80) return this.#fail('no SRTP protection profile agreed');
    // RFC 5764 §4.2: the exporter gives each side's master key and salt; ours protects, theirs checks.
    const suite = SRTP_SUITES.AES_CM_128_HMAC_SHA1_80;
    const keys = dtls.extractSessionKeys(suite.keyBytes, suite.saltBytes) as { localKey: Buffer; localSalt: Buffer; remoteKey: Buffer; remoteSalt: Buffer };
    this.#srtp = new SrtpSession(
      { suite: suite.name, keySalt: Buffer.concat([keys.localKey, keys.localSalt]) },
      { suite: suite.name, keySalt: Buffer.concat([keys.remoteKey, keys.remoteSalt]) },
    );
    clearTimeout(this.#handshakeTimer);
  }

  #fail(reason: string): void {
    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#options.onFailure?.(reason);
  }
}
