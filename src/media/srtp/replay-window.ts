// Replay protection (RFC 3711 §3.3.2): a packet index seen already, or too old to tell, is refused.
// The window remembers the index held by each of its slots (index modulo the size), so no shifting
// of bit masks is needed and nothing is allocated; a slot holds an index only if that index was
// taken, so finding it there means a replay. Indices are whole numbers below 2^48 (exact doubles).

/** Packets behind the highest index still accepted once (libsrtp's default window). */
export const REPLAY_WINDOW = 128;

export class ReplayWindow {
  readonly #slots = new Float64Array(REPLAY_WINDOW).fill(-1);
  #highest = -1;

  /** Whether `index` may be taken (it is neither a replay nor older than the window). */
  allows(index: number): boolean {
    if (index > this.#highest) return true;
    if (this.#highest - index >= REPLAY_WINDOW) return false;
    return this.#slots[index % REPLAY_WINDOW] !== index;
  }

  /** Records `index` as taken (after its packet authenticated). */
  take(index: number): void {
    this.#slots[index % REPLAY_WINDOW] = index;
    if (index > this.#highest) this.#highest = index;
  }

  reset(): void {
    this.#slots.fill(-1);
    this.#highest = -1;
  }
}
