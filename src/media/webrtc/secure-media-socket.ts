// The media socket of a WebRTC call whose packets are handled on the main thread. What it shares
// with a media worker's (workers/worker-secure-socket.ts) — the demultiplexing of STUN, DTLS and
// SRTP on one port (RFC 7983), ICE-lite, the consent-gated send (RFC 7675) and the SRTP protection
// that refuses everything before the keys — is checked-pair-socket.ts's. Here the DTLS handshake
// (dtls-keying.ts, RFC 5763/5764) runs in place: its records go to and come from the checked pair,
// and the keys it exports (AES_CM_128_HMAC_SHA1_80) key the socket's SRTP directly.
import type dgram from 'node:dgram';
import { CheckedPairSocket } from './checked-pair-socket.ts';
import type { DtlsIdentity } from './dtls-identity.ts';
import { DtlsKeying, type RemoteSecurity, type SecureMediaOptions } from './dtls-keying.ts';
import { IceLiteResponder, type SelectedPair } from './ice-lite.ts';

export type { RemoteSecurity, SecureMediaOptions } from './dtls-keying.ts';

export class SecureMediaSocket extends CheckedPairSocket {
  readonly #keying: DtlsKeying;

  constructor(raw: dgram.Socket, identity: DtlsIdentity, options: SecureMediaOptions = {}) {
    super(raw, new IceLiteResponder());
    this.#keying = new DtlsKeying(identity, options, (record) => this.#sendRecord(record), (keys) => this.installKeys(keys.local, keys.remote));
  }

  /** Our certificate's fingerprint, for a=fingerprint. */
  get fingerprint(): string {
    return this.#keying.fingerprint;
  }

  /**
   * What the far end's SDP said (the offer we answer, or the answer to our offer). The DTLS role
   * is settled by then; a renegotiation that keeps it changes nothing.
   */
  configureRemote(remote: RemoteSecurity): void {
    this.ice.setRemote(remote.iceUfrag);
    if (this.closed) return;
    this.#keying.configureRemote(remote);
  }

  /** The far end checked its first pair: the handshake may start (and its deadline runs from now). */
  protected override onChecked(previous: SelectedPair | undefined): void {
    if (!previous && this.ice.selected) this.#keying.pairChecked();
  }

  protected override onDtlsRecord(record: Buffer): boolean {
    this.#keying.receive(record);
    return true;
  }

  protected override onClose(): void {
    this.#keying.close();
  }

  /** A DTLS record to the checked pair. */
  #sendRecord(record: Buffer): Promise<void> {
    return new Promise<void>((resolve) => this.sendToPair(record, resolve));
  }
}
