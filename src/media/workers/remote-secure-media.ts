// The main thread's side of a WebRTC call whose stream runs in a media worker (issue 25): what the
// call's SDP needs (our ICE credentials, made here and handed to the worker at open, and our
// certificate's fingerprint) and the DTLS-SRTP handshake (webrtc/dtls-keying.ts), whose records
// travel as messages — the worker's DTLS from the checked pair comes in (dtlsIn), ours goes out to
// be sent from the worker's socket — until it exports the keys, which go to the worker once. The
// worker tells when the far end checked a pair (the handshake's deadline runs from then) and when
// its consent lapses or comes back (the worker stops sending by itself; this only keeps the state).
import type { DtlsIdentity } from '../webrtc/dtls-identity.ts';
import { DtlsKeying, type RemoteSecurity, type SecureMediaOptions } from '../webrtc/dtls-keying.ts';
import { iceCredentials, type IceCredentials, type SelectedPair } from '../webrtc/ice-lite.ts';
import type { ToWorker } from './protocol.ts';
import { MAX_DTLS_RECORD_BYTES } from './worker-secure-socket.ts';
import { crossingKey } from './worker-srtp.ts';

/** DTLS records of ours waiting for the stream to open in its worker (none should: DTLS starts after the SDP, which needs the port). */
const MAX_RECORDS_BEFORE_OPEN = 16;

export class RemoteSecureMedia {
  readonly ice: { readonly local: IceCredentials } = { local: iceCredentials() };
  readonly #keying: DtlsKeying;
  #post: ((message: ToWorker) => void) | undefined;
  #id = 0;
  #before: Uint8Array[] = [];
  #selected: SelectedPair | undefined;
  #consented = false;
  /** The address the worker bound the stream's port on (a candidate of our SDP). */
  boundAddress = '0.0.0.0';

  constructor(identity: DtlsIdentity, options: SecureMediaOptions = {}) {
    this.#keying = new DtlsKeying(identity, options, (record) => this.#send(record), (keys) => {
      this.#tell({ type: 'srtp-keys', id: this.#id, srtp: { local: crossingKey(keys.local), remote: crossingKey(keys.remote) } });
    });
  }

  /** Our certificate's fingerprint, for a=fingerprint. */
  get fingerprint(): string {
    return this.#keying.fingerprint;
  }

  /** DTLS finished and the keys went to the worker. */
  get secured(): boolean {
    return this.#keying.keyed;
  }

  /** The pair the far end checked, as the worker last told. */
  get selected(): SelectedPair | undefined {
    return this.#selected;
  }

  /** Whether the far end's consent was fresh when the worker last told (RFC 7675). */
  get consented(): boolean {
    return this.#consented;
  }

  /** The stream opened in its worker as stream `id`: messages go there from now on. */
  attach(id: number, host: string, post: (message: ToWorker) => void): void {
    this.#id = id;
    this.boundAddress = host;
    this.#post = post;
    for (const record of this.#before.splice(0)) post({ type: 'dtls-out', id, record });
  }

  /** What the far end's SDP said: its ufrag to the worker's ICE-lite, the DTLS role to the handshake. */
  configureRemote(remote: RemoteSecurity): void {
    this.#tell({ type: 'ice-remote', id: this.#id, ...(remote.iceUfrag === undefined ? {} : { ufrag: remote.iceUfrag }) });
    this.#keying.configureRemote(remote);
  }

  /** A DTLS record the worker received from the checked pair. */
  dtlsIn(record: Uint8Array): void {
    if (!(record instanceof Uint8Array) || record.length > MAX_DTLS_RECORD_BYTES) return;
    this.#keying.receive(Buffer.from(record.buffer, record.byteOffset, record.length));
  }

  /** The worker's ICE-lite: the checked pair and its consent now. */
  iceChanged(selected: SelectedPair | undefined, consented: boolean): void {
    this.#selected = selected;
    this.#consented = consented;
    if (selected) this.#keying.pairChecked();
  }

  close(): void {
    this.#keying.close();
    this.#post = undefined;
    this.#before = [];
  }

  #send(record: Buffer): Promise<void> {
    // A copy of its own: werift's record may be a view of a larger buffer, which a message would clone whole.
    const copy = new Uint8Array(record);
    if (this.#post) this.#post({ type: 'dtls-out', id: this.#id, record: copy });
    else if (this.#before.length < MAX_RECORDS_BEFORE_OPEN) this.#before.push(copy);
    return Promise.resolve();
  }

  #tell(message: ToWorker): void {
    this.#post?.(message);
  }
}
