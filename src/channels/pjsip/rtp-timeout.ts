// The endpoint's rtp_timeout, as chan_pjsip applies it: an answered call whose far end sends no
// RTP for that many seconds, while it is not holding the call, is hung up (cause 44, requested
// channel unavailable) — a phone that vanished without a BYE must not hold a channel and a port
// pair for ever. Checked once a second against the stream's received-packet count, so the media
// path itself does no extra work, and only after the sockets were read (see start()).
// rtp_timeout_hold is the same watch while the far end holds the call (res_pjsip_sdp_rtp sets the
// RTP instance's timeout to it when the stream is held): a held phone sends nothing, so only a
// longer limit of its own may end it. A change between held and not held starts the quiet time
// again, as the renegotiation resets the instance's timeout in Asterisk.
// While the call's media is direct (direct-media.ts: its far end was asked to send to the other
// leg's far end) no RTP comes here by design: res_pjsip_sdp_rtp's rtp_check_timeout skips an RTP
// instance that is natively bridged, and so is the check here; when the media returns the count
// starts again from then, so the direct time never counts as silence.

/** What the check reads of a call. */
export interface RtpActivity {
  /** Packets received on the call's stream so far; undefined while it has none. */
  received(): number | undefined;
  /** The far end holds the call (sendonly/inactive): silence is expected then. */
  held(): boolean;
  /** The far end sends its media to another leg's far end, not to us (direct media): no silence counts. */
  direct?(): boolean;
}

/** Why a call was found silent: which of the two limits passed. */
export type RtpSilence = 'active' | 'held';

export class RtpTimeout {
  readonly #limitMs: number;
  readonly #holdLimitMs: number;
  readonly #activity: RtpActivity;
  readonly #expire: (seconds: number, when: RtpSilence) => void;
  #timer: NodeJS.Timeout | undefined;
  #lastCount: number | undefined;
  #quietSince = 0;
  #wasHeld = false;
  #wasDirect = false;

  /**
   * `seconds` (rtp_timeout) applies while the call is not held, `holdSeconds` (rtp_timeout_hold)
   * while the far end holds it; 0 turns either check off (the default, as in Asterisk).
   */
  constructor(seconds: number, activity: RtpActivity, expire: (seconds: number, when: RtpSilence) => void, holdSeconds = 0) {
    this.#limitMs = Math.max(0, seconds) * 1000;
    this.#holdLimitMs = Math.max(0, holdSeconds) * 1000;
    this.#activity = activity;
    this.#expire = expire;
  }

  /** The call was answered: start watching. */
  start(now = Date.now()): void {
    if ((this.#limitMs === 0 && this.#holdLimitMs === 0) || this.#timer) return;
    this.#quietSince = now;
    this.#lastCount = this.#activity.received();
    this.#wasHeld = this.#activity.held();
    this.#wasDirect = this.#activity.direct?.() === true;
    // Looked at after the loop's poll phase: Node runs due timers before it reads the sockets, so
    // after a stall of this process (a loaded machine) the packets that came meanwhile still wait
    // unread when the interval fires, and a check then would hang up a live call. setImmediate
    // runs once they are read (libuv reads a few dozen datagrams a socket per pass: one is enough).
    this.#timer = setInterval(() => setImmediate(this.#checkNow), 1000);
    this.#timer.unref();
  }

  readonly #checkNow = (): void => this.check();

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look (the interval's tick; tests call it with their own clock). */
  check(now = Date.now()): void {
    if (!this.#timer) return;
    const count = this.#activity.received();
    const held = this.#activity.held();
    const direct = this.#activity.direct?.() === true;
    const limitMs = held ? this.#holdLimitMs : this.#limitMs;
    if (direct || direct !== this.#wasDirect || limitMs === 0 || held !== this.#wasHeld || count !== this.#lastCount) {
      this.#lastCount = count;
      this.#wasHeld = held;
      this.#wasDirect = direct;
      this.#quietSince = now;
      return;
    }
    if (now - this.#quietSince >= limitMs) {
      this.stop();
      this.#expire(limitMs / 1000, held ? 'held' : 'active');
    }
  }
}
