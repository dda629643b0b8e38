// The RTCP side of one RTP stream (RFC 3550 6): when reports are due (the configured interval,
// randomised to 0.5–1.5 times it as 6.3.5 asks, the first one after half an interval), what
// they carry (SR when we sent media since the last report, RR otherwise, one report block about
// the source we receive with LSR/DLSR, SDES CNAME; BYE at the end), and what the far end's
// reports tell us: round-trip time (6.4.1), the loss and jitter it sees of our stream. Building
// and reading reuse one buffer and one record: nothing is allocated per packet.
import { randomBytes } from 'node:crypto';
import { NtpTime, readRtcpCompound, ReportBlock, RtcpReading, writeBye, writeReceiverReport, writeSdesCname, writeSenderReport } from './rtcp-packet.ts';
import { Spread, type RtpReceiverStats } from './receiver-stats.ts';
import { MAX_PROTECTION_OVERHEAD } from './protection.ts';
import { mediaExperienceScore } from './media-experience.ts';
import type { RtpSender } from './sender.ts';

/** Room for SR + one block + SDES with the longest CNAME + BYE. */
const MAX_COMPOUND_BYTES = 28 + 24 + 8 + 264 + 8;

export interface RtcpFigures {
  /** Packets of ours the far end reported lost (cumulative). */
  readonly remoteLost: number;
  /** The jitter the far end reported of our stream, seconds. */
  readonly remoteJitter: number;
  readonly remoteJitterSpread: Spread;
  readonly remoteLostSpread: Spread;
  /** The packets we lost in each interval between our reports, as Asterisk's `rxlost` samples. */
  readonly localLostSpread: Spread;
  /** Last round-trip time, seconds; 0 before one was measured. */
  readonly rtt: number;
  readonly rttSpread: Spread;
  /** The media experience score of the stream we receive, as of our last report (media-experience.ts); 0 before it. */
  readonly localMes: number;
  readonly localMesSpread: Spread;
  /** The score of our stream from the far end's last report block about it; 0 before one. */
  readonly remoteMes: number;
  readonly remoteMesSpread: Spread;
}

export class RtcpSession implements RtcpFigures {
  /** The compound packet built last (valid until the next build), with room for SRTCP's trailer. */
  readonly packet = Buffer.alloc(MAX_COMPOUND_BYTES + MAX_PROTECTION_OVERHEAD);
  readonly #cname: Uint8Array;
  readonly #ntp = new NtpTime();
  readonly #reading = new RtcpReading();
  readonly #block = new ReportBlock();
  readonly #intervalMs: number;
  readonly #clockRate: number;
  #nextReportAt: number | undefined;
  #packetsAtLastReport = 0;
  #lastSender: RtpSender | undefined;
  /** The last SR from the far end: its NTP middle bits and when it arrived (monotonic ms). */
  #lastSrMiddle = 0;
  #lastSrArrivalMs = 0;
  remoteLost = 0;
  remoteJitter = 0;
  rtt = 0;
  readonly remoteJitterSpread = new Spread();
  readonly remoteLostSpread = new Spread();
  readonly localLostSpread = new Spread();
  readonly rttSpread = new Spread();
  localMes = 0;
  readonly localMesSpread = new Spread();
  remoteMes = 0;
  readonly remoteMesSpread = new Spread();
  /** Reports sent and compound packets accepted from the far end. */
  sent = 0;
  received = 0;
  /** The far end said BYE. */
  remoteBye = false;

  /**
   * `intervalMs`: the mean time between reports; `clockRate`: the RTP clock of our payload (what
   * the far end's jitter is counted in); `cname` defaults to a random one per stream (RFC 7022).
   */
  constructor(intervalMs: number, clockRate = 8000, cname?: string) {
    this.#intervalMs = Math.max(100, intervalMs);
    this.#clockRate = clockRate;
    const name = cname ?? randomBytes(12).toString('base64url');
    this.#cname = Buffer.from(name.slice(0, 255), 'latin1');
  }

  /** Whether a report is due at monotonic time `nowMs` (the first is due half an interval after the first call). */
  due(nowMs: number): boolean {
    if (this.#nextReportAt === undefined) {
      this.#nextReportAt = nowMs + this.#intervalMs / 2;
      return false;
    }
    return nowMs >= this.#nextReportAt;
  }

  /** No report now (nobody to send it to): the next one is due an interval later. */
  postpone(nowMs: number): void {
    this.#schedule(nowMs);
  }

  #schedule(nowMs: number): void {
    this.#nextReportAt = nowMs + this.#intervalMs * (0.5 + Math.random());
  }

  #fillBlock(receiver: RtpReceiverStats | undefined, nowMs: number): ReportBlock | undefined {
    if (!receiver || !receiver.started) return undefined;
    const block = this.#block;
    block.ssrc = receiver.ssrc;
    block.fractionLost = receiver.takeFractionLost();
    block.cumulativeLost = receiver.lost;
    block.extendedHighestSequence = receiver.extendedHighestSequence;
    block.jitter = receiver.jitterUnits;
    if (this.#lastSrArrivalMs > 0) {
      block.lastSr = this.#lastSrMiddle;
      block.delaySinceLastSr = Math.max(0, Math.round(((nowMs - this.#lastSrArrivalMs) * 65536) / 1000)) >>> 0;
    } else {
      block.lastSr = 0;
      block.delaySinceLastSr = 0;
    }
    this.localLostSpread.add(receiver.intervalLost);
    return block;
  }

  /**
   * The score of the stream we receive, as Asterisk figures it each time it writes a report (after
   * the loss of the interval is counted): mean round trip, the current jitter and its deviation,
   * the mean loss per interval.
   */
  #scoreLocal(receiver: RtpReceiverStats | undefined): void {
    const jitter = receiver?.started ? receiver.jitterSeconds : 0;
    const jitterStdev = receiver?.started ? receiver.jitterSpread.stdev : 0;
    this.localMes = mediaExperienceScore(this.rttSpread.mean, jitter, jitterStdev, this.localLostSpread.mean);
    this.localMesSpread.add(this.localMes);
  }

  /**
   * Builds the periodic compound report into `packet` (SR if `sender` sent media since the last
   * one, else RR; SDES CNAME; BYE too when `bye`). `nowMs` monotonic, `unixMs` wall clock.
   * Returns its length; 0 when there is no sender yet.
   */
  build(sender: RtpSender | undefined, receiver: RtpReceiverStats | undefined, nowMs: number, unixMs: number, bye = false): number {
    if (!sender) return 0;
    this.#schedule(nowMs);
    const packet = this.packet;
    const block = this.#fillBlock(receiver, nowMs);
    this.#scoreLocal(receiver);
    let length: number;
    // A new sender (the codec changed) starts its counts again.
    if (sender !== this.#lastSender) {
      this.#lastSender = sender;
      this.#packetsAtLastReport = 0;
    }
    if (sender.packets > this.#packetsAtLastReport) {
      this.#ntp.setFromUnixMs(unixMs);
      length = writeSenderReport(packet, 0, sender.ssrc, this.#ntp, sender.timestamp, sender.packets, sender.octets, block);
    } else {
      length = writeReceiverReport(packet, 0, sender.ssrc, block);
    }
    this.#packetsAtLastReport = sender.packets;
    length += writeSdesCname(packet, length, sender.ssrc, this.#cname);
    if (bye) length += writeBye(packet, length, sender.ssrc);
    this.sent += 1;
    return length;
  }

  /**
   * Takes a datagram from the far end; false when it is not RTCP. `ourSsrc` picks the report
   * block about our stream. Round-trip time: arrival − LSR − DLSR, in 1/65536 s (RFC 3550 6.4.1).
   */
  receive(packet: Uint8Array, length: number, ourSsrc: number, nowMs: number, unixMs: number): boolean {
    const reading = this.#reading;
    if (!readRtcpCompound(packet, length, ourSsrc, reading)) return false;
    this.received += 1;
    if (reading.hasSenderInfo) {
      this.#lastSrMiddle = reading.srNtpMiddle;
      this.#lastSrArrivalMs = nowMs;
    }
    if (reading.hasBlock) {
      this.remoteLost = Math.max(0, reading.cumulativeLost);
      this.remoteLostSpread.add(this.remoteLost);
      // The far end counts the jitter of our stream in our payload's timestamp units.
      this.remoteJitter = reading.jitter / this.#clockRate;
      this.remoteJitterSpread.add(this.remoteJitter);
      if (reading.lastSr !== 0) {
        const arrival = this.#ntp.setFromUnixMs(unixMs).middle;
        const units = (arrival - reading.lastSr - reading.delaySinceLastSr) >>> 0;
        // A negative result (clock steps, a bogus DLSR) wraps to a huge number: ignored.
        if (units < 0x8000_0000) {
          this.rtt = units / 65536;
          this.rttSpread.add(this.rtt);
        }
      }
      // The score of our stream as the far end sees it: from its latest jitter and the spreads.
      this.remoteMes = mediaExperienceScore(this.rttSpread.mean, this.remoteJitter, this.remoteJitterSpread.stdev, this.remoteLostSpread.mean);
      this.remoteMesSpread.add(this.remoteMes);
    }
    if (reading.bye) this.remoteBye = true;
    return true;
  }
}
