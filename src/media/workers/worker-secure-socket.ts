// The media socket of a WebRTC call whose stream runs in a media worker (issue 25): the worker owns
// the call's UDP port. What it shares with the main thread's socket — the demultiplexing of STUN,
// DTLS and SRTP on one port (RFC 7983), ICE-lite with the credentials the main thread put in our
// SDP, the consent-gated send (RFC 7675) and the SRTP that refuses everything before the keys — is
// webrtc/checked-pair-socket.ts's. Here DTLS records, a handful per call, go to the main thread,
// whose handshake (webrtc/dtls-keying.ts) sends its own back to be sent from here, and sends the
// exported keys when it connects. The pair the far end checked, and its consent lapsing or coming
// back, are told to the main thread as they change. What crosses is bounded: records above a size
// or beyond a rate are dropped.
import type dgram from 'node:dgram';
import { CheckedPairSocket } from '../webrtc/checked-pair-socket.ts';
import { IceLiteResponder, type IceCredentials, type SelectedPair } from '../webrtc/ice-lite.ts';
import { assertWorkerSrtpKeys, type WorkerSrtpKeys } from './worker-srtp.ts';

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

export class WorkerSecureSocket extends CheckedPairSocket {
  readonly #reports: SecureSocketReports;
  /** What the main thread was last told of the pair and its consent. */
  #toldPair: SelectedPair | undefined;
  #toldConsent = false;
  #windowStart = 0;
  #windowRecords = 0;

  /** `consentTimeoutMs`: RFC 7675's 30 s (ice-lite.ts) unless a test needs it shorter. */
  constructor(raw: dgram.Socket, credentials: IceCredentials, reports: SecureSocketReports, consentTimeoutMs?: number) {
    super(raw, new IceLiteResponder(credentials, consentTimeoutMs));
    this.#reports = reports;
  }

  /** The far end's a=ice-ufrag (from the main thread's offer/answer). */
  setRemoteUfrag(ufrag: string | undefined): void {
    this.ice.setRemote(typeof ufrag === 'string' && ufrag.length <= MAX_ICE_CREDENTIAL_CHARS ? ufrag : undefined);
  }

  /** The keys the handshake exported; throws on keys that are not keys (the stream then closes). */
  key(keys: WorkerSrtpKeys): void {
    assertWorkerSrtpKeys(keys);
    this.installKeys(keys.local, keys.remote);
  }

  /** A DTLS record of the main thread's handshake, sent to the checked pair. */
  sendRecord(record: Uint8Array): void {
    if (!(record instanceof Uint8Array) || record.length === 0 || record.length > MAX_DTLS_RECORD_BYTES) return;
    this.sendToPair(record);
  }

  /** The main thread hears of a pair that moved or a consent that lapsed or came back. */
  protected override onChecked(): void {
    const pair = this.ice.selected;
    const told = this.#toldPair;
    const moved = pair?.address !== told?.address || pair?.port !== told?.port;
    if (moved || this.ice.consented() !== this.#toldConsent) this.#tell();
  }

  protected override onSendConsent(consented: boolean): void {
    if (consented !== this.#toldConsent) this.#tell();
  }

  protected override onDtlsRecord(record: Buffer): boolean {
    if (record.length > MAX_DTLS_RECORD_BYTES || !this.#withinRecordBudget()) return false;
    // A copy of its own: the message would otherwise clone whatever memory the packet is a view of.
    this.#reports.dtls(new Uint8Array(record));
    return true;
  }

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
