// werift's DTLS stack, loaded by the first WebRTC call that needs it (its identity, its handshake),
// not with the media modules: the package and what it pulls in (ASN.1 and X.509 libraries, elliptic
// curves, tweetnacl) cost ≈ 24 MiB resident and 140 ms of CPU to load, which a server without
// WebRTC calls need not pay at start (docs/performance.md, "The idle server's memory (stop 36)").
// Synchronously, through require (the package is CommonJS), so the callers stay synchronous.
import { createRequire } from 'node:module';

export type WeriftDtls = typeof import('werift-dtls/lib/dtls/src/index.js');

let loaded: WeriftDtls | undefined;

/** The werift-dtls package, loaded on first use. */
export function weriftDtls(): WeriftDtls {
  if (loaded === undefined) {
    const module: WeriftDtls = createRequire(import.meta.url)('werift-dtls/lib/dtls/src/index.js');
    loaded = module;
  }
  return loaded;
}

/** Whether this thread has loaded werift's DTLS stack yet (tests check that an idle server has not). */
export function weriftDtlsLoaded(): boolean {
  return loaded !== undefined;
}
