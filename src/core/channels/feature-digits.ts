// The DTMF a party of a two-party bridge presses, read for its feature codes as Asterisk's bridge
// channel does (bridge_channel.c's DTMF hooks): a digit that starts a code the party may use is held
// back from the other party; the digits collected so far run the feature once they equal its code,
// and are passed on, in order, the moment they can no longer become one or the feature digit
// timeout passes after the last of them. One per party with features; a digit per event is the
// only work, audio never comes here.

/** How long a held-back digit is played when passed on (Asterisk's default emulated DTMF length). */
const HELD_DIGIT_MS = 100;

/** One code a party may press, and what it does. */
export interface FeatureCode {
  readonly digits: string;
  readonly run: () => void;
}

export class FeatureDigits {
  #collected = '';
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /**
   * `codes`: the party's features (empty codes left out); `pass` sends a digit on to the other
   * party (with the duration it was pressed for; one held back goes with the default length).
   */
  constructor(
    private readonly codes: readonly FeatureCode[],
    private readonly timeoutMs: number,
    private readonly pass: (digit: string, durationMs: number) => void,
  ) {}

  /** A digit from the party; true when it was held back or ran a feature (pass is not called for it now). */
  digit(digit: string, durationMs: number): boolean {
    if (this.#stopped || this.codes.length === 0) return false;
    const collected = this.#collected + digit.toUpperCase();
    const exact = this.codes.find((code) => code.digits === collected);
    if (exact) {
      this.#reset();
      exact.run();
      return true;
    }
    if (this.codes.some((code) => code.digits.startsWith(collected))) {
      this.#collected = collected;
      this.#arm();
      return true;
    }
    if (this.#collected === '') return false;
    // No code begins so: what was held back goes on first, then this digit, in the order pressed.
    this.flush();
    this.pass(digit, durationMs);
    return true;
  }

  /** Passes on what was held back (the timeout, or the party leaving the feature's reach). */
  flush(): void {
    const held = this.#collected;
    this.#reset();
    for (const digit of held) this.pass(digit, HELD_DIGIT_MS);
  }

  /** For good: the party left the call; what was held back is dropped with it. */
  stop(): void {
    this.#stopped = true;
    this.#reset();
  }

  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.flush(), this.timeoutMs);
    this.#timer.unref?.();
  }

  #reset(): void {
    this.#collected = '';
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
