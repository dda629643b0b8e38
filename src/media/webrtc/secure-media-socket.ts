// The media socket of a WebRTC call: beneath the RTP stream, which reads and writes plain RTP and
// RTCP, one UDP port carries STUN (ICE-lite checks and consent), DTLS (the handshake that keys
// SRTP, RFC 5763/5764) and SRTP/SRTCP multiplexed (rtcp-mux, BUNDLE of one audio stream), told
// apart by their first byte (RFC 7983). Nothing is sent before the browser's checks chose the
// pair and DTLS gave the keys; nothing is delivered up that did not authenticate as SRTP; sending
// stops when consent lapses (RFC 7675).
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { DtlsClient, DtlsServer, type DtlsSocket } from 'werift-dtls/lib/dtls/src/index.js';
import { looksLikeRtcp } from '../rtp/rtcp-packet.ts';
import type { MediaMessageListener, MediaSocket } from '../rtp/media-socket.ts';
import { createSrtpTransform, SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80, type SrtpProfileId, type SrtpTransform } from '../srtp/dtls-srtp.ts';
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

export class SecureMediaSocket implements MediaSocket {
  readonly ice = new IceLiteResponder();
  readonly #raw: dgram.Socket;
  readonly #identity: DtlsIdentity;
  readonly #options: SecureMediaOptions;
  readonly #events = new EventEmitter();
  #remote: RemoteSecurity | undefined;
  #dtls: DtlsSocket | undefined;
  #srtp: SrtpTransform | undefined;
  #early: Array<{ packet: Buffer; address: string; port: number }> = [];
  #handshakeTimer: NodeJS.Timeout | undefined;
  #failed = false;
  #closed = false;
  /** Packets dropped: before keys, failed authentication, or from elsewhere than the checked pair. */
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

  /** Plain RTP or RTCP from the stream: protected and sent to the checked pair (the stream's idea of the address is not used). */
  send(message: Buffer, offset: number, length: number, _port: number, _address: string, callback?: (error: Error | null) => void): void {
    const srtp = this.#srtp;
    const pair = this.ice.selected;
    if (!srtp || !pair || !this.ice.consented() || this.#closed) {
      callback?.(null);
      return;
    }
    const plain = message.subarray(offset, offset + length);
    let packet: Buffer;
    try {
      packet = looksLikeRtcp(plain, plain.length) ? srtp.protectRtcp(plain) : srtp.protectRtp(plain);
    } catch (error) {
      callback?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.#raw.send(packet, pair.port, pair.address, callback);
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
    if (!looksLikeRtp(packet) || !fromPair || !this.#srtp) return void (this.dropped += 1);
    const plain = looksLikeRtcp(packet, packet.length) ? this.#srtp.unprotectRtcp(packet) : this.#srtp.unprotectRtp(packet);
    if (!plain) return void (this.dropped += 1);
    this.#events.emit('message', plain, rinfo);
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
      srtpProfiles: [SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80] as SrtpProfileId[],
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
    const profile = dtls.srtp.srtpProfile;
    if (profile !== SRTP_AES128_CM_HMAC_SHA1_80 && profile !== SRTP_AEAD_AES_128_GCM) return this.#fail('no SRTP protection profile agreed');
    const { keyLength, saltLength } = profileLengths(profile);
    const keys = dtls.extractSessionKeys(keyLength, saltLength) as { localKey: Buffer; localSalt: Buffer; remoteKey: Buffer; remoteSalt: Buffer };
    this.#srtp = createSrtpTransform({ profile, ...keys });
    clearTimeout(this.#handshakeTimer);
  }

  #fail(reason: string): void {
    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#options.onFailure?.(reason);
  }
}

/** Master key and salt lengths of a profile (RFC 3711 §8.2, RFC 7714 §12). */
function profileLengths(profile: SrtpProfileId): { keyLength: number; saltLength: number } {
  return profile === SRTP_AEAD_AES_128_GCM ? { keyLength: 16, saltLength: 12 } : { keyLength: 16, saltLength: 14 };
}
