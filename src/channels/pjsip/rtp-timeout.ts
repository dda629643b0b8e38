// The endpoint's rtp_timeout, as chan_pjsip applies it: an answered call whose far end sends no
// RTP for that many seconds, while it is not holding the call, is hung up (cause 44, requested
// channel unavailable) — a phone that vanished without a BYE must not hold a channel and a port
// pair for ever. Checked once a second against the stream's received-packet count, so the media
// path itself does no extra work.

/** What the check reads of a call. */
export interface RtpActivity {
  /** Packets received on the call's stream so far; undefined while it has none. */
  received(): number | undefined;
  /** The far end holds the call (sendonly/inactive): silence is expected then. */
  held(): boolean;
}

export class RtpTimeout {
  readonly #limitMs: number;
  readonly #activity: RtpActivity;
  readonly #expire: (seconds: number) => void;
  #timer: NodeJS.Timeout | undefined;
  #lastCount: number | undefined;
  #quietSince = 0;

  /** `seconds` 0 turns the check off (the default, as in Asterisk). */
  constructor(seconds: number, activity: RtpActivity, expire: (seconds: number) => void) {
    this.#limitMs = Math.max(0, seconds) * 1000;
    this.#activity = activity;
    this.#expire = expire;
  }

  /** The call was answered: start watching. */
  start(now = Date.now()): void {
    if (this.#limitMs === 0 || this.#timer) return;
    this.#quietSince = now;
    this.#lastCount = this.#activity.received();
    this.#timer = setInterval(() => this.check(), 1000);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look (the interval's tick; tests call it with their own clock). */
  check(now = Date.now()): void {
    if (!this.#timer) return;
    const count = this.#activity.received();
    if (this.#activity.held() || count !== this.#lastCount) {
      this.#lastCount = count;
      this.#quietSince = now;
      return;
    }
    if (now - this.#quietSince >= this.#limitMs) {
      this.stop();
      this.#expire(this.#limitMs / 1000);
    }
  }
}
