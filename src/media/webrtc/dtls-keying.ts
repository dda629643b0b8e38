// The DTLS-SRTP handshake of one WebRTC call (RFC 5763/5764), apart from where its records travel:
// werift's DTLS server or client, started once the far end's SDP settled our role, fed the records
// that came from the checked pair and handing back the records to send; the far end's certificate
// checked against its SDP fingerprint; the SRTP master keys exported when it connects. The main
// thread runs one per call whether the call's packets are handled here (secure-media-socket.ts) or
// in a media worker (workers/remote-secure-media.ts, which carries the records as messages): the
// handshake is a handful of records per call, not worth a DTLS stack in every worker.
import type { AddressInfo } from 'node:net';
import type { DtlsSocket } from 'werift-dtls/lib/dtls/src/index.js';
import { SRTP_SUITES, type SrtpMasterKey } from '../srtp/suites.ts';
import { derFingerprint, type DtlsIdentity } from './dtls-identity.ts';
import { weriftDtls } from './werift-dtls.ts';

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

/** SRTP's master keys as the handshake exported them: ours protects, theirs checks. */
export interface ExportedKeys {
  readonly local: SrtpMasterKey;
  readonly remote: SrtpMasterKey;
}

/** Where the handshake's records go: to the checked pair (a promise settled once handed to the socket). */
export type SendRecord = (record: Buffer) => Promise<void>;

export class DtlsKeying {
  readonly #identity: DtlsIdentity;
  readonly #options: SecureMediaOptions;
  readonly #onKeys: (keys: ExportedKeys) => void;
  #remote: RemoteSecurity | undefined;
  #dtls: DtlsSocket | undefined;
  #early: Buffer[] = [];
  #handshakeTimer: NodeJS.Timeout | undefined;
  #pairChecked = false;
  #keyed = false;
  /** werift's last error before the keys: not the end of the handshake (see #start), the timeout's reason. */
  #lastError: string | undefined;
  #failed = false;
  #closed = false;

  /** What werift's DTLS reads from and writes to. */
  readonly #transport: {
    type: string;
    closed: boolean;
    onData: (data: Buffer, address: readonly [string, number]) => void;
    send: (data: Buffer) => Promise<void>;
    close: () => Promise<void>;
    readonly address: AddressInfo;
  };

  constructor(identity: DtlsIdentity, options: SecureMediaOptions, send: SendRecord, onKeys: (keys: ExportedKeys) => void) {
    this.#identity = identity;
    this.#options = options;
    this.#onKeys = onKeys;
    this.#transport = {
      type: 'udp',
      closed: false,
      onData: () => undefined,
      send: (data) => (this.#closed ? Promise.resolve() : send(data)),
      close: async () => undefined,
      get address(): AddressInfo {
        return { address: '0.0.0.0', family: 'IPv4', port: 0 };
      },
    };
  }

  /** Our certificate's fingerprint, for a=fingerprint. */
  get fingerprint(): string {
    return this.#identity.fingerprint;
  }

  /** The handshake finished and exported the keys. */
  get keyed(): boolean {
    return this.#keyed;
  }

  /** What the far end's SDP said: the first settles our role and starts DTLS; later ones change nothing here. */
  configureRemote(remote: RemoteSecurity): void {
    const previous = this.#remote;
    this.#remote = remote;
    if (previous || this.#closed) return;
    this.#start(remote.role);
  }

  /** A DTLS record from the checked pair (kept, up to a few, while DTLS has not started). */
  receive(record: Buffer): void {
    if (this.#closed) return;
    if (this.#dtls) this.#transport.onData(record, ['0.0.0.0', 0]);
    else if (this.#early.length < MAX_EARLY_RECORDS) this.#early.push(record);
  }

  /**
   * The browser checked a pair, so the handshake can run now: as the client we start it, and either
   * way it has the handshake timeout to finish (not counted while the call rings without our SDP).
   */
  pairChecked(): void {
    if (this.#pairChecked || this.#closed) return;
    this.#pairChecked = true;
    if (this.#dtls) this.#run(this.#dtls);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#handshakeTimer);
    try {
      this.#dtls?.close();
    } catch {
      // a handshake cut short: nothing to say goodbye to
    }
  }

  #start(role: 'client' | 'server'): void {
    const options = {
      transport: this.#transport,
      cert: this.#identity.certPem,
      key: this.#identity.keyPem,
      signatureHash: this.#identity.signatureHash,
      srtpProfiles: [SRTP_AES128_CM_HMAC_SHA1_80],
      // RFC 5763 §5: the far end must present its certificate, whose fingerprint its SDP gave.
      certificateRequest: true,
      extendedMasterSecret: true,
    };
    const { DtlsClient, DtlsServer } = weriftDtls();
    const dtls = role === 'server' ? new DtlsServer(options) : new DtlsClient(options);
    this.#dtls = dtls;
    dtls.onConnect.subscribe(() => this.#connected(dtls));
    // werift reports an error when it handles a flight the far end sent again (a second
    // HelloVerifyRequest or ServerHello, retransmitted when our answer took over a second: a loaded
    // main thread, a burst of calls), yet the handshake goes on and both sides export the same keys.
    // So an error fails the call only when werift gave up retransmitting; any other waits for the
    // handshake timeout, which names it.
    dtls.onError.subscribe((error: Error) => {
      const message = error instanceof Error ? error.message : String(error);
      this.#lastError = message || (error instanceof Error ? error.name : 'error');
      if (/over retransmitCount/.test(message)) this.#fail(`DTLS: ${this.#lastError}`);
    });
    for (const early of this.#early.splice(0)) this.#transport.onData(early, ['0.0.0.0', 0]);
    if (this.#pairChecked) this.#run(dtls);
  }

  #run(dtls: DtlsSocket): void {
    if (dtls instanceof weriftDtls().DtlsClient) dtls.connect().catch((error: unknown) => this.#fail(`DTLS: ${error instanceof Error ? error.message : String(error)}`));
    this.#handshakeTimer = setTimeout(() => {
      if (!this.#keyed) this.#fail(`DTLS handshake did not finish${this.#lastError ? ` (last error: ${this.#lastError})` : ''}`);
    }, this.#options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS);
    this.#handshakeTimer.unref();
  }

  #connected(dtls: DtlsSocket): void {
    // A Finished the far end sent again connects werift again, with the same keys: exported once.
    if (this.#closed || this.#keyed || this.#failed) return;
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
    this.#keyed = true;
    clearTimeout(this.#handshakeTimer);
    this.#onKeys({
      local: { suite: suite.name, keySalt: Buffer.concat([keys.localKey, keys.localSalt]) },
      remote: { suite: suite.name, keySalt: Buffer.concat([keys.remoteKey, keys.remoteSalt]) },
    });
  }

  #fail(reason: string): void {
    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#options.onFailure?.(reason);
  }
}
