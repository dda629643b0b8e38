// What one call chain may make of Local pairs. `local_max_depth` stops a loop that dials itself in a
// line, but not one that widens: `Dial(Local/x&Local/x)` at each level doubles the pairs, so twenty
// levels are a million channels. A chain is the channels sharing a linkedid (a Local pair takes its
// requestor's); it may make at most `local_max_descendants` pairs in all while any of its Local
// channels lives. Counting pairs made rather than pairs alive matters: under a live-only bound a
// widening loop refills every slot its failed leaves free and goes on for minutes.
import type { Channel } from '../../core/channels/channel.ts';
import { UnavailableError } from '../../core/errors.ts';

interface Chain {
  /** Pairs made since the chain last had no Local channel. */
  made: number;
  /** Local channels of the chain still up. */
  live: number;
}

export class LocalChainBudget {
  readonly #chains = new Map<string, Chain>();

  /** Throws UnavailableError when the chain of `linkedId` has made its `limit` pairs (0 = unlimited). */
  claim(linkedId: string | undefined, limit: number, resource: string): void {
    if (!limit || linkedId === undefined) return;
    const made = this.#chains.get(linkedId)?.made ?? 0;
    if (made >= limit) {
      throw new UnavailableError(`This call has made ${made} Local channel pairs, the most one call may (local_max_descendants): ${resource}`);
    }
  }

  /** Counts the new pair against its chain until both halves have hung up. */
  track(one: Channel, two: Channel): void {
    const key = one.linkedId;
    let chain = this.#chains.get(key);
    if (!chain) this.#chains.set(key, (chain = { made: 0, live: 0 }));
    const counted = chain;
    counted.made++;
    counted.live += 2;
    // One listener for both halves (each calls it once): it lives as long as the call.
    const hungUp = (): void => {
      counted.live--;
      if (counted.live === 0 && this.#chains.get(key) === counted) this.#chains.delete(key);
    };
    one.once('hangup', hungUp);
    two.once('hangup', hungUp);
  }

  /** Chains with a live Local channel (for tests and metrics). */
  get size(): number {
    return this.#chains.size;
  }
}
