// A server-wide budget for slow password checks. The failed-login budget is per client address,
// and an attacker with many addresses (a /64, or 127.0.0.0/8 on the host) gets a fresh budget for
// each: 2,000 addresses were 2,000 crypt checks in 1.7 s. This token bucket bounds the checks the
// whole server starts per second, whoever asks; a credential verified before needs no check and
// is not held up by it.

export class CheckBudget {
  readonly #perSecond: number;
  readonly #now: () => number;
  #tokens: number;
  #updatedAt: number;

  /** `perSecond` checks a second, in bursts of as many; 0 = no budget. */
  constructor(perSecond: number, now: () => number = Date.now) {
    this.#perSecond = perSecond;
    this.#now = now;
    this.#tokens = perSecond;
    this.#updatedAt = now();
  }

  /** Takes one check from the budget; false when it is spent (the check must not run). */
  take(): boolean {
    if (this.#perSecond <= 0) return true;
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#updatedAt);
    this.#updatedAt = now;
    this.#tokens = Math.min(this.#perSecond, this.#tokens + (elapsed / 1000) * this.#perSecond);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
