// At most one log line per interval for a kind of event that an attacker (or a full disk) can make
// happen thousands of times a second: the first is logged at once, the rest are counted and the count
// rides on the next line, so the log says how much happened without being flooded by it.

export class LogThrottle {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(intervalMs: number, now: () => number = Date.now) {
    this.intervalMs = intervalMs;
    this.now = now;
  }

  /**
   * Whether to log this occurrence. When it is, `write` gets how many were swallowed since the last
   * line (0 when none).
   */
  run(write: (suppressed: number) => void): boolean {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed += 1;
      return false;
    }
    this.lastAt = now;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    write(suppressed);
    return true;
  }
}
