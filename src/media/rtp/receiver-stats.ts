// RFC 3550 receiver state for one source: sequence tracking (A.1), loss (A.3, cumulative and per
// report interval, what an RTCP receiver report carries) and interarrival jitter (A.8). Updating
// it allocates nothing.
import { RTP_SEQ_MOD, type RtpHeader } from './packet.ts';

/** RFC 3550 A.1: sequence jumps and misorder tolerated before a source is considered restarted. */
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;

/** Running min/max/mean/standard deviation (Welford). */
export class Spread {
  count = 0;
  min = 0;
  max = 0;
  mean = 0;
  #m2 = 0;

  add(value: number): void {
    this.count += 1;
    if (this.count === 1 || value < this.min) this.min = value;
    if (this.count === 1 || value > this.max) this.max = value;
    const delta = value - this.mean;
    this.mean += delta / this.count;
    this.#m2 += delta * (value - this.mean);
  }

  get stdev(): number {
    return this.count > 1 ? Math.sqrt(this.#m2 / (this.count - 1)) : 0;
  }
}

export class RtpReceiverStats {
  ssrc = 0;
  /** Every packet from the source, duplicates included. */
  packets = 0;
  /** Payload octets of those packets. */
  octets = 0;
  #started = false;
  #baseSeq = 0;
  #maxSeq = 0;
  #cycles = 0;
  #badSeq = RTP_SEQ_MOD + 1;
  /** Packets counted since the source (re)started. */
  #received = 0;
  #expectedPrior = 0;
  #receivedPrior = 0;
  #haveTransit = false;
  #lastArrival = 0;
  #lastTimestamp = 0;
  /** RFC 3550 jitter, in timestamp units. */
  #jitter = 0;
  /** The jitter after each packet, in seconds. */
  readonly jitterSpread = new Spread();
  /** Packets lost in the interval takeFractionLost() closed last (0 when more came than expected). */
  intervalLost = 0;

  /** `clockRate`: the payload's RTP timestamp rate. */
  constructor(private readonly clockRate: number) {}

  /** Accounts for a received packet as parseRtpPacket() read it; `arrivalMs` on a monotonic clock. */
  count(header: RtpHeader, arrivalMs: number): void {
    this.update(header.ssrc, header.sequence, header.timestamp, header.payloadBytes, arrivalMs);
  }

  /** Accounts for one packet from the source; `arrivalMs` on a monotonic clock. */
  update(ssrc: number, seq: number, timestamp: number, payloadBytes: number, arrivalMs: number): void {
    this.packets += 1;
    this.octets += payloadBytes;
    if (!this.#started || ssrc !== this.ssrc) {
      this.#restart(ssrc, seq);
    } else {
      const delta = (seq - this.#maxSeq + RTP_SEQ_MOD) % RTP_SEQ_MOD;
      if (delta < MAX_DROPOUT) {
        if (seq < this.#maxSeq) this.#cycles += RTP_SEQ_MOD;
        this.#maxSeq = seq;
      } else if (delta <= RTP_SEQ_MOD - MAX_MISORDER) {
        // A very large jump: accept it only when the next packet follows it (the sender restarted).
        if (seq === this.#badSeq) this.#restart(ssrc, seq);
        else this.#badSeq = (seq + 1) % RTP_SEQ_MOD;
      }
      // Otherwise a duplicate or misordered packet: counted, no change to the sequence state.
    }
    this.#received += 1;
    const arrival = (arrivalMs * this.clockRate) / 1000;
    if (this.#haveTransit) {
      // D(i-1,i) = (R_i - R_{i-1}) - (S_i - S_{i-1}); the timestamp difference as a signed 32-bit value.
      const d = arrival - this.#lastArrival - ((timestamp - this.#lastTimestamp) | 0);
      this.#jitter += (Math.abs(d) - this.#jitter) / 16;
      this.jitterSpread.add(this.#jitter / this.clockRate);
    }
    this.#haveTransit = true;
    this.#lastArrival = arrival;
    this.#lastTimestamp = timestamp;
  }

  #restart(ssrc: number, seq: number): void {
    this.#started = true;
    this.ssrc = ssrc;
    this.#baseSeq = seq;
    this.#maxSeq = seq;
    this.#cycles = 0;
    this.#badSeq = RTP_SEQ_MOD + 1;
    this.#received = 0;
    this.#expectedPrior = 0;
    this.#receivedPrior = 0;
    this.#haveTransit = false;
    this.#jitter = 0;
  }

  get started(): boolean {
    return this.#started;
  }

  /** Extended highest sequence number received (cycles in the upper 16 bits), for receiver reports. */
  get extendedHighestSequence(): number {
    return this.#cycles + this.#maxSeq;
  }

  get expected(): number {
    return this.#started ? this.#cycles + this.#maxSeq - this.#baseSeq + 1 : 0;
  }

  /** Cumulative packets lost (never negative here; RFC 3550 allows duplicates to make it so). */
  get lost(): number {
    return Math.max(0, this.expected - this.#received);
  }

  /** Interarrival jitter in timestamp units (what a receiver report carries). */
  get jitterUnits(): number {
    return this.#jitter;
  }

  /** Interarrival jitter in seconds. */
  get jitterSeconds(): number {
    return this.#jitter / this.clockRate;
  }

  /**
   * The fraction lost since the previous call, as the 8-bit fixed-point number of a receiver
   * report (A.3); each call starts a new interval (its count of lost packets: intervalLost).
   */
  takeFractionLost(): number {
    const expected = this.expected;
    const expectedInterval = expected - this.#expectedPrior;
    this.#expectedPrior = expected;
    const receivedInterval = this.#received - this.#receivedPrior;
    this.#receivedPrior = this.#received;
    const lostInterval = expectedInterval - receivedInterval;
    this.intervalLost = lostInterval > 0 ? lostInterval : 0;
    return expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval << 8) / expectedInterval);
  }
}
