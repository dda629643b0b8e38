// RFC 4733 telephone-events (DTMF carried in RTP): the 4-byte payload, the receiving side that
// turns a stream of event packets (start, updates, three retransmitted ends) into one digit with
// its duration, and the sending side that schedules those packets one per 20 ms media tick. The
// payload type comes from the SDP (`a=rtpmap:<pt> telephone-event/8000`); nothing here assumes one.

export const TELEPHONE_EVENT_PAYLOAD_BYTES = 4;
/** The events of DTMF digits, by code: 0–9, *, #, A–D (RFC 4733 3.2). */
const EVENT_DIGITS = '0123456789*#ABCD';
/** Volume sent with our events (dBm0 below zero, as RFC 4733 3.5 counts it). */
const DEFAULT_VOLUME = 10;
/** End packets are sent three times (RFC 4733 2.5.1.4). */
const END_REPEATS = 3;
/** The longest event one duration field can carry (16 bits of timestamp units). */
const MAX_DURATION_UNITS = 0xffff;

/** One decoded payload, filled in place. */
export class TelephoneEvent {
  event = 0;
  end = false;
  volume = 0;
  /** In timestamp units, since the event's timestamp. */
  duration = 0;
}

/** The event code of a DTMF digit (case-insensitive), or -1. */
export function dtmfEventCode(digit: string): number {
  return digit.length === 1 ? EVENT_DIGITS.indexOf(digit.toUpperCase()) : -1;
}

/** The digit of an event code, or undefined for events that are not DTMF digits (flash, tones). */
export function dtmfDigitOf(event: number): string | undefined {
  return event >= 0 && event < EVENT_DIGITS.length ? EVENT_DIGITS[event] : undefined;
}

/** Writes one payload at `offset`; returns the bytes written (4). */
export function encodeTelephoneEvent(dst: Uint8Array, offset: number, event: number, end: boolean, volume: number, duration: number): number {
  dst[offset] = event & 0xff;
  dst[offset + 1] = (end ? 0x80 : 0) | (volume & 0x3f);
  dst[offset + 2] = (duration >>> 8) & 0xff;
  dst[offset + 3] = duration & 0xff;
  return TELEPHONE_EVENT_PAYLOAD_BYTES;
}

/** Reads the payload in `src[start, end)` into `out`; false when it is too short. */
export function decodeTelephoneEvent(src: Uint8Array, start: number, end: number, out: TelephoneEvent): boolean {
  if (end - start < TELEPHONE_EVENT_PAYLOAD_BYTES) return false;
  out.event = src[start];
  out.end = (src[start + 1] & 0x80) !== 0;
  out.volume = src[start + 1] & 0x3f;
  out.duration = (src[start + 2] << 8) | src[start + 3];
  return true;
}

export type DigitListener = (digit: string, durationMs: number) => void;

/**
 * Turns received event packets into digits: a digit is reported once, when its end arrives (the
 * retransmitted ends are ignored), or when a new event starts before the old one ended.
 * `onBegin`, when given, hears of a digit as its first packet arrives.
 */
export class TelephoneEventReceiver {
  readonly #clockRate: number;
  readonly #onDigit: DigitListener;
  readonly #onBegin: ((digit: string) => void) | undefined;
  readonly #scratch = new TelephoneEvent();
  #active = false;
  #timestamp = 0;
  #event = 0;
  #duration = 0;
  /** Timestamp of the last event that ended (its retransmissions are ignored). */
  #endedTimestamp = -1;

  constructor(clockRate: number, onDigit: DigitListener, onBegin?: (digit: string) => void) {
    this.#clockRate = clockRate;
    this.#onDigit = onDigit;
    this.#onBegin = onBegin;
  }

  /** One received packet's payload and RTP timestamp. */
  push(src: Uint8Array, start: number, end: number, timestamp: number): void {
    const event = this.#scratch;
    if (!decodeTelephoneEvent(src, start, end, event)) return;
    if (timestamp === this.#endedTimestamp) return;
    if (!this.#active || timestamp !== this.#timestamp) {
      if (this.#active) this.#finish();
      this.#active = true;
      this.#timestamp = timestamp;
      this.#event = event.event;
      this.#duration = 0;
      const digit = dtmfDigitOf(event.event);
      if (digit !== undefined) this.#onBegin?.(digit);
    }
    if (event.duration > this.#duration) this.#duration = event.duration;
    if (event.end) this.#finish();
  }

  #finish(): void {
    this.#active = false;
    this.#endedTimestamp = this.#timestamp;
    const digit = dtmfDigitOf(this.#event);
    if (digit !== undefined) this.#onDigit(digit, Math.round((this.#duration * 1000) / this.#clockRate));
  }
}

/**
 * Schedules the packets of digits to send: call next() once per 20 ms tick while `active`; it
 * writes the payload of the packet due and says whether it carries the marker (the first) and
 * whether the event has ended. All packets of one digit share the timestamp `timestamp`, the
 * RTP timestamp of the tick the digit began on; the caller sets it with begin().
 */
export class TelephoneEventSender {
  readonly #unitsPerTick: number;
  #event = -1;
  #duration = 0;
  #target = 0;
  #endsLeft = 0;
  #first = false;
  /** The RTP timestamp of the current digit. */
  timestamp = 0;
  /** Set by next(): the packet written is the digit's first. */
  marker = false;

  /** `clockRate` of the telephone-event payload (8000 in practice). */
  constructor(clockRate: number) {
    this.#unitsPerTick = (clockRate * 20) / 1000;
  }

  get active(): boolean {
    return this.#event >= 0;
  }

  /** Whether the packet next() writes starts a digit: the RTP marker bit, known before the header is written. */
  get nextStartsDigit(): boolean {
    return this.#event >= 0 && this.#first;
  }

  /** Starts a digit of `durationMs` at RTP timestamp `timestamp`; false for a character that is not a digit. */
  begin(digit: string, durationMs: number, timestamp: number): boolean {
    const event = dtmfEventCode(digit);
    if (event < 0) return false;
    this.#event = event;
    this.#duration = 0;
    this.#target = Math.min(MAX_DURATION_UNITS, Math.max(this.#unitsPerTick, Math.round((durationMs * this.#unitsPerTick) / 20)));
    this.#endsLeft = END_REPEATS;
    this.#first = true;
    this.timestamp = timestamp >>> 0;
    return true;
  }

  /** Writes the next packet's payload at `offset` (4 bytes); false when no digit is being sent. */
  next(dst: Uint8Array, offset: number): boolean {
    if (this.#event < 0) return false;
    this.marker = this.#first;
    this.#first = false;
    if (this.#duration < this.#target) {
      this.#duration = Math.min(this.#target, this.#duration + this.#unitsPerTick);
      const end = this.#duration >= this.#target;
      encodeTelephoneEvent(dst, offset, this.#event, end, DEFAULT_VOLUME, this.#duration);
      if (end) this.#endsLeft -= 1;
    } else {
      encodeTelephoneEvent(dst, offset, this.#event, true, DEFAULT_VOLUME, this.#duration);
      this.#endsLeft -= 1;
    }
    if (this.#endsLeft <= 0) this.#event = -1;
    return true;
  }
}
