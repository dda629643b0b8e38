// werift's DTLS stack, loaded by the first WebRTC call that needs it (its identity, its handshake),
// not with the media modules: the package and what it pulls in (ASN.1 and X.509 libraries, elliptic
// curves, tweetnacl) cost ≈ 24 MiB resident and 140 ms of CPU to load, which a server without
// WebRTC calls need not pay at start (docs/performance.md, "The idle server's memory (stop 36)").
import { loadOnFirstUse } from '../../util/load-on-first-use.ts';

export type WeriftDtls = typeof import('werift-dtls/lib/dtls/src/index.js');

const werift = loadOnFirstUse<WeriftDtls>('werift-dtls/lib/dtls/src/index.js', import.meta.url);

/** The werift-dtls package, loaded on first use. */
export function weriftDtls(): WeriftDtls {
  return werift.get();
}

/** Whether this thread has loaded werift's DTLS stack yet (tests check that an idle server has not). */
export function weriftDtlsLoaded(): boolean {
  return werift.loaded();
}
