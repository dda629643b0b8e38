// Server-wide state that several servers may share (global variables, the astdb). The core knows
// no cluster: each store tells a listener what was written here and takes what another server
// wrote (applyShared) without telling it again, so a write never echoes around (docs/cluster.md).

/** One write: `name` is the variable's name or the astdb's full path (`/family/key`); `value` undefined for a removal. */
export interface SharedWrite {
  readonly name: string;
  readonly value: string | undefined;
}

export type SharedWriteListener = (write: SharedWrite) => void;

/** What a shared store offers the cluster: local writes out, other servers' writes in. */
export interface SharedStore {
  onWrite: SharedWriteListener | undefined;
  /** Applies another server's write here (the store's own bounds hold: InvalidError beyond them). */
  applyShared(write: SharedWrite): void;
}
