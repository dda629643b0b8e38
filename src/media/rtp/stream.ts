// The media of one SIP call: a UDP socket pair from the configured RTP port range (RTP on an even
// port, RTCP on the odd one above it), G.711 audio coded by the RTP library, RFC 4733
// telephone-events both ways or DTMF as tones in the audio (dtmf_mode inband), and symmetric RTP
// (we send to where the far end's packets come from once they come, RFC 4961 in spirit, for
// phones behind NAT; the same for RTCP), strict by default as Asterisk's `strictrtp`: the source
// is learned only at the start of the call and after the far end's SDP moved its media, and only
// from a source that sent `probation` packets in sequence; after that, packets from anywhere
// else are dropped (counted), so a stranger cannot redirect the call's audio to itself. Frames written by the channel leave at once (one packet
// per 20 ms frame); received audio goes through the adaptive jitter buffer (or, with it off, the
// plain receive queue) and reaches the channel one frame per media clock tick. RTCP: a report
// every sip.rtcp_interval_ms (SR after sending, RR otherwise), the far end's reports read for
// round-trip time and its view of our stream, BYE at the end; on the RTP port when rtcp-mux was
// agreed (RTCP is told from RTP by its packet type there, RFC 5761).
// Per packet nothing is allocated: the header, the scratch buffers and the packet rings are reused.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { DtmfDetector, dtmfToneList } from '../dtmf.ts';
import type { Frame } from '../frame.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import { OutgoingRate } from './outgoing-rate.ts';
import { parseRtpPacket, RtpHeader } from './packet.ts';
import { RtpPayloadCoder } from './payload.ts';
import { ReceiveQueue } from './receive-queue.ts';
import { RtpReceiverStats } from './receiver-stats.ts';
import { looksLikeRtcp } from './rtcp-packet.ts';
import { RtcpSession } from './rtcp-session.ts';
import { RtpSender } from './sender.ts';
import { rtpStatistics, type RtpStatistics } from './statistics.ts';
import { ToneGenerator } from '../tone-generator.ts';
import { parseToneList } from '../tones.ts';
import { TelephoneEventReceiver, TelephoneEventSender, TELEPHONE_EVENT_PAYLOAD_BYTES } from './telephone-event.ts';
import { closeQuietly } from './port-range.ts';

export type StreamDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What offer/answer agreed, as the stream needs it. */
export interface StreamParameters {
  /** `ulaw` or `alaw`. */
  readonly codec: string;
  readonly payloadType: number;
  readonly telephoneEventPt?: number;
  readonly remoteAddress?: string;
  readonly remotePort: number;
  /** Where RTCP goes (a=rtcp, else remotePort + 1; remotePort with rtcp-mux). */
  readonly remoteRtcpPort?: number;
  /** RTCP shares the RTP port (RFC 5761). */
  readonly rtcpMux?: boolean;
  readonly direction: StreamDirection;
  /** DTMF as tones in the audio: detected in what is received, generated for digits sent. */
  readonly inbandDtmf?: boolean;
}

/** How the technology configured the stream's media handling. */
export interface StreamOptions {
  /** The RTCP socket (RTP port + 1); without it RTCP is sent only when multiplexed. */
  readonly rtcpSocket?: dgram.Socket;
  /** Mean ms between RTCP reports. Default 5000. */
  readonly rtcpIntervalMs?: number;
  /** The adaptive jitter buffer's bounds; absent: the plain receive queue. */
  readonly jitterBuffer?: { readonly minDelayMs: number; readonly maxDelayMs: number };
  /** Strict RTP (Asterisk's `strictrtp`): learn the source only during learning, then lock. Default true. */
  readonly strictRtp?: boolean;
  /** Packets in sequence a source must send during learning before it is taken (Asterisk's `probation`). Default 4. */
  readonly probation?: number;
  /** Totals shared by every stream of the technology (GET /metrics): counted as things happen, so they outlive the call. */
  readonly totals?: RtpStreamTotals;
}

/**
 * What all streams dropped and concealed, since start. The stranger counters are incremented on
 * the hot path (a number field, nothing allocated); the jitter buffer's counters are added when a
 * stream closes (a live stream's own counts are added to these when scraped).
 */
export class RtpStreamTotals {
  /** RTP packets dropped because they came from another source than the far end's (strict RTP). */
  strangerPackets = 0;
  /** RTCP packets dropped because they came from elsewhere than the far end. */
  strangerReports = 0;
  /** Jitter buffer: packets dropped because their audio arrived after it was due. */
  latePackets = 0;
  /** Jitter buffer: frames made up for missing audio. */
  concealedFrames = 0;
}

/** What the received audio goes through before the channel hears it. */
interface ReceivePath {
  scratch(count: number): Int16Array;
  push(samples: Int16Array, count: number, timestamp: number, ssrc: number, arrivalMs: number): void;
  next(nowMs: number): Frame | undefined;
}

/** Audio played as it arrives (sip.jitterbuffer false): the receive queue, which ignores timestamps. */
class PlainReceivePath implements ReceivePath {
  readonly #queue = new ReceiveQueue(8000);
  scratch(count: number): Int16Array {
    return this.#queue.scratch(count);
  }
  push(samples: Int16Array, count: number): void {
    this.#queue.pushFrom(samples, count);
  }
  next(): Frame | undefined {
    return this.#queue.next();
  }
}

/** Gap after an inband digit, so that two equal digits in a row are heard as two. */
const INBAND_GAP_MS = 50;
/** Peak per frequency of generated digits: about -10 dBm0 each. */
const INBAND_AMPLITUDE = 7000;

export interface StreamEvents {
  /** A whole digit received as telephone-events. */
  onDigit(digit: string, durationMs: number): void;
  /** One 20 ms frame of received audio, on a media clock tick. */
  onFrame(frame: Frame): void;
  /**
   * Strict RTP dropped the first packet of a stranger once the source was learned (called once per
   * stream, not per packet: the technology logs it).
   */
  onStranger?(address: string, port: number): void;
  /** The stream closed (once), its counts added to the totals. */
  onClosed?(): void;
}

/** The media clock as the stream needs it. */
export interface StreamClock {
  readonly ticks: number;
  onTick(listener: () => void): void;
  offTick(listener: () => void): void;
}

export class RtpStream {
  readonly socket: dgram.Socket;
  readonly rtcpSocket: dgram.Socket | undefined;
  readonly localPort: number;
  #parameters: StreamParameters | undefined;
  #coder: RtpPayloadCoder | undefined;
  #sender: RtpSender | undefined;
  #receiver: RtpReceiverStats | undefined;
  #outgoing = new OutgoingRate(8000);
  readonly #receive: ReceivePath;
  readonly #jitterBuffer: JitterBuffer | undefined;
  readonly #rtcp: RtcpSession;
  readonly #header = new RtpHeader();
  readonly #digitsOut = new TelephoneEventSender(8000);
  readonly #digitsIn: TelephoneEventReceiver;
  readonly #inbandIn: DtmfDetector;
  /** The digit being played as tones, and the frame it is rendered into. */
  #inbandOut: ToneGenerator | undefined;
  readonly #toneFrame: Frame = { rate: 8000, samples: new Int16Array(160) };
  /** Digits waiting behind the one being sent. */
  readonly #pendingDigits: { digit: string; durationMs: number }[] = [];
  /** Where media goes: the SDP's address until a source is learned, then that source. */
  #remoteAddress: string | undefined;
  #remotePort = 0;
  /** The address the far end's SDP gave last: a different one starts learning again. */
  #sdpAddress: string | undefined;
  #sdpPort = 0;
  readonly #strict: boolean;
  readonly #probation: number;
  /** Strict RTP: a source may still be learned (start of call, after the SDP moved the media). */
  #learning = true;
  /** Packets in sequence from where media goes now, and the last one's sequence number. */
  #targetRun = 0;
  #targetSequence = 0;
  /** Another source on probation: its address, packets in sequence, the last sequence number. */
  #candidateAddress: string | undefined;
  #candidatePort = 0;
  #candidateRun = 0;
  #candidateSequence = 0;
  /**
   * The source learned before the SDP moved the media: its packets still in flight while learning
   * again are heard, but it can never be learned back by them (else a phone moving networks would
   * be locked onto the path it left).
   */
  #previousAddress: string | undefined;
  #previousPort = 0;
  /** RTP packets dropped because they came from a source other than the learned one (or one on probation). */
  strangerPackets = 0;
  /** RTCP packets dropped because they came from elsewhere than the far end. */
  strangerReports = 0;
  /** The technology's totals (a private object when none was given). */
  readonly #totals: RtpStreamTotals;
  /** A stranger's packet was dropped after learning already (it is reported once). */
  #strangerReported = false;
  #rtcpAddress: string | undefined;
  #rtcpPort = 0;
  /** Symmetric RTCP: once a report came from an address, report there. */
  #rtcpLatched = false;
  #closed = false;

  constructor(
    socket: dgram.Socket,
    private readonly clock: StreamClock,
    private readonly events: StreamEvents,
    options: StreamOptions = {},
  ) {
    this.socket = socket;
    this.rtcpSocket = options.rtcpSocket;
    this.localPort = socket.address().port;
    this.#digitsIn = new TelephoneEventReceiver(8000, (digit, durationMs) => this.events.onDigit(digit, durationMs));
    this.#inbandIn = new DtmfDetector({ rate: 8000, onDigitEnd: (digit, durationMs) => this.events.onDigit(digit, durationMs) });
    this.#rtcp = new RtcpSession(options.rtcpIntervalMs ?? 5000);
    this.#strict = options.strictRtp ?? true;
    this.#probation = Math.max(1, Math.floor(options.probation ?? 4));
    this.#totals = options.totals ?? new RtpStreamTotals();
    if (options.jitterBuffer) {
      this.#jitterBuffer = new JitterBuffer({ rate: 8000, ...options.jitterBuffer });
      this.#receive = this.#jitterBuffer;
    } else {
      this.#receive = new PlainReceivePath();
    }
    socket.on('message', this.#onMessage);
    socket.on('error', ignoreSocketError);
    this.rtcpSocket?.on('message', this.#onRtcpMessage);
    this.rtcpSocket?.on('error', ignoreSocketError);
    clock.onTick(this.#tick);
  }

  get parameters(): StreamParameters | undefined {
    return this.#parameters;
  }

  /** Closed: its counts are in the totals already. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The jitter buffer, when one is used (its counters and target delay). */
  get jitterBuffer(): JitterBuffer | undefined {
    return this.#jitterBuffer;
  }

  /** The RTCP side (reports sent and received, what they measured). */
  get rtcp(): RtcpSession {
    return this.#rtcp;
  }

  /** Applies (or changes, on a re-INVITE) what offer/answer agreed. */
  configure(parameters: StreamParameters): void {
    const codecChanged = parameters.codec !== this.#parameters?.codec || parameters.payloadType !== this.#parameters?.payloadType;
    const wasInband = this.#parameters?.inbandDtmf === true;
    const first = this.#parameters === undefined;
    this.#parameters = parameters;
    if (codecChanged || !this.#coder) {
      this.#coder = new RtpPayloadCoder(parameters.codec, parameters.payloadType);
      const previous = this.#sender;
      this.#sender = new RtpSender(this.#coder, previous ? { ssrc: previous.ssrc, sequence: undefined, timestamp: previous.timestamp } : {});
      this.#receiver ??= new RtpReceiverStats(this.#coder.codec.clockRate);
      this.#outgoing = new OutgoingRate(this.#coder.rate);
    }
    // A new media address in the SDP (the call's first, or a re-INVITE moving it): send there and
    // learn the source again. The same address again (a codec change, hold) keeps what was learned.
    const moved = first || parameters.remoteAddress !== this.#sdpAddress || parameters.remotePort !== this.#sdpPort;
    if (moved) {
      this.#previousAddress = first ? undefined : this.#remoteAddress;
      this.#previousPort = first ? 0 : this.#remotePort;
      this.#sdpAddress = parameters.remoteAddress;
      this.#sdpPort = parameters.remotePort;
      this.#remoteAddress = parameters.remoteAddress;
      this.#remotePort = parameters.remotePort;
      this.#learning = true;
      this.#targetRun = 0;
      this.#candidateRun = 0;
      this.#candidateAddress = undefined;
      this.#rtcpLatched = false;
    }
    if (!this.#rtcpLatched) {
      this.#rtcpAddress = parameters.remoteAddress;
      this.#rtcpPort = parameters.rtcpMux ? parameters.remotePort : (parameters.remoteRtcpPort ?? Math.min(parameters.remotePort + 1, 65535));
    }
    if (parameters.inbandDtmf && !wasInband) this.#inbandIn.reset();
  }

  statistics(): RtpStatistics | undefined {
    if (this.#closed || !this.#sender || !this.#receiver) return undefined;
    return rtpStatistics(this.#sender, this.#receiver, this.#rtcp);
  }

  /** One 20 ms frame from the channel towards the far end. */
  writeFrame(frame: Frame): void {
    const sender = this.#sender;
    if (this.#closed || !sender || !this.#canSend() || this.#digitsOut.active || this.#inbandOut) return;
    const length = sender.audio(this.#outgoing.samples(frame), this.clock.ticks);
    this.#send(sender.packet, length);
  }

  /**
   * A digit as RFC 4733 events, or as tones in the audio when the stream does inband DTMF; false
   * when it can do neither (the far end did not agree to telephone-event).
   */
  sendDigit(digit: string, durationMs: number): boolean {
    if (this.#closed) return false;
    if (this.#parameters?.telephoneEventPt === undefined && !this.#parameters?.inbandDtmf) return false;
    if (this.#pendingDigits.length >= 64) return true;
    this.#pendingDigits.push({ digit, durationMs });
    return true;
  }

  /** Ends the stream: an RTCP BYE to the far end (when there was media), then the sockets close. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const jitterBuffer = this.#jitterBuffer;
    if (jitterBuffer) {
      this.#totals.latePackets += jitterBuffer.late;
      this.#totals.concealedFrames += jitterBuffer.concealed;
    }
    this.events.onClosed?.();
    this.clock.offTick(this.#tick);
    this.socket.off('message', this.#onMessage);
    this.rtcpSocket?.off('message', this.#onRtcpMessage);
    const rtcpVia = this.#rtcpSocketInUse();
    const length = rtcpVia && this.#rtcpPort > 0 && this.#rtcpAddress ? this.#rtcp.build(this.#sender, this.#receiver, performance.now(), unixNowMs(), true) : 0;
    // Close each socket once what was sent on it has left (the BYE is sent asynchronously).
    const closeAll = (): void => {
      closeQuietly(this.socket);
      if (this.rtcpSocket) closeQuietly(this.rtcpSocket);
    };
    if (length > 0 && rtcpVia) {
      try {
        rtcpVia.send(this.#rtcp.packet, 0, length, this.#rtcpPort, this.#rtcpAddress!, closeAll);
        return;
      } catch {
        // the socket is gone already
      }
    }
    closeAll();
  }

  #canSend(): boolean {
    const direction = this.#parameters?.direction;
    return this.#remoteAddress !== undefined && this.#remotePort > 0 && (direction === 'sendrecv' || direction === 'sendonly');
  }

  /** The socket RTCP leaves from: the RTP socket when multiplexed, else the RTCP socket. */
  #rtcpSocketInUse(): dgram.Socket | undefined {
    return this.#parameters?.rtcpMux ? this.socket : this.rtcpSocket;
  }

  #send(packet: Buffer, length: number): void {
    this.socket.send(packet, 0, length, this.#remotePort, this.#remoteAddress!, this.#onSent);
  }

  readonly #onSent = (): void => {
    // Send errors (unreachable far end) are not fatal to the call.
  };

  readonly #writeEvent = (dst: Buffer, offset: number): number => {
    this.#digitsOut.next(dst, offset);
    return TELEPHONE_EVENT_PAYLOAD_BYTES;
  };

  /** Starts the next waiting digit as tones (a character that is not a digit is skipped). */
  #startInbandDigit(): void {
    const next = this.#pendingDigits.shift()!;
    const list = dtmfToneList(next.digit, Math.max(40, Math.min(next.durationMs, 5000)), INBAND_GAP_MS);
    const tones = list === undefined ? undefined : parseToneList(list);
    if (tones) this.#inbandOut = new ToneGenerator(tones, { rate: 8000, amplitude: INBAND_AMPLITUDE });
  }

  readonly #tick = (): void => {
    if (this.#closed) return;
    const sender = this.#sender;
    const parameters = this.#parameters;
    if (sender && parameters && this.#canSend()) {
      const eventPt = parameters.telephoneEventPt;
      if (eventPt !== undefined) {
        // DTMF out as telephone-events: one event packet per tick while a digit is being sent.
        if (!this.#digitsOut.active && this.#pendingDigits.length > 0) {
          const next = this.#pendingDigits.shift()!;
          this.#digitsOut.begin(next.digit, next.durationMs, sender.timestamp);
        }
        if (this.#digitsOut.active) {
          const length = sender.other(eventPt, this.#digitsOut.nextStartsDigit, this.#digitsOut.timestamp, this.clock.ticks, this.#writeEvent);
          this.#send(sender.packet, length);
        }
      } else if (parameters.inbandDtmf) {
        // DTMF out as tones: the digit's frames replace the channel's audio until it ends.
        if (!this.#inbandOut && this.#pendingDigits.length > 0) this.#startInbandDigit();
        const generator = this.#inbandOut;
        if (generator) {
          generator.fill(this.#toneFrame.samples);
          if (generator.finished) this.#inbandOut = undefined;
          const length = sender.audio(this.#outgoing.samples(this.#toneFrame), this.clock.ticks);
          this.#send(sender.packet, length);
        }
      }
    }
    const now = performance.now();
    const frame = this.#receive.next(now);
    if (frame) {
      if (parameters?.inbandDtmf) this.#inbandIn.process(frame.samples);
      this.events.onFrame(frame);
    }
    if (sender && this.#rtcp.due(now)) this.#sendReport(now);
  };

  #sendReport(now: number): void {
    const socket = this.#rtcpSocketInUse();
    if (!socket || !this.#rtcpAddress || this.#rtcpPort <= 0) {
      // Nobody to report to yet: ask again an interval later.
      this.#rtcp.postpone(now);
      return;
    }
    const length = this.#rtcp.build(this.#sender, this.#receiver, now, unixNowMs());
    if (length > 0) socket.send(this.#rtcp.packet, 0, length, this.#rtcpPort, this.#rtcpAddress, this.#onSent);
  }

  readonly #onMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.#closed) return;
    if (looksLikeRtcp(message, message.length)) {
      this.#takeRtcp(message, rinfo, true);
      return;
    }
    const header = this.#header;
    if (!parseRtpPacket(message, message.length, header)) return;
    const parameters = this.#parameters;
    const coder = this.#coder;
    if (!parameters || !coder) return;
    if (header.payloadType !== coder.payloadType && header.payloadType !== parameters.telephoneEventPt) return;
    if (!this.#fromFarEnd(rinfo.address, rinfo.port, header.sequence)) {
      this.strangerPackets += 1;
      this.#totals.strangerPackets += 1;
      // A source on probation while learning is no news (a phone behind NAT); one once the source is locked is.
      if (!this.#learning && !this.#strangerReported) {
        this.#strangerReported = true;
        this.events.onStranger?.(rinfo.address, rinfo.port);
      }
      return;
    }
    const now = performance.now();
    this.#receiver?.update(header.ssrc, header.sequence, header.timestamp, header.payloadBytes, now);
    if (parameters.direction === 'sendonly' || parameters.direction === 'inactive') return;
    if (header.payloadType === parameters.telephoneEventPt) {
      this.#digitsIn.push(message, header.payloadStart, header.payloadEnd, header.timestamp);
      return;
    }
    const count = coder.samplesIn(header.payloadStart, header.payloadEnd);
    if (count === 0) return;
    const samples = this.#receive.scratch(count);
    coder.decode(message, header.payloadStart, header.payloadEnd, samples);
    this.#receive.push(samples, count, header.timestamp, header.ssrc, now);
  };

  /**
   * Whether an RTP packet from `address`:`port` is the far end's (symmetric RTP: a source taken
   * becomes where media goes). Without strict RTP every sender is taken at once. With it, while
   * learning, packets from where media goes are taken (and `probation` of them in sequence end
   * learning there); another source must send `probation` packets in sequence, uninterrupted by
   * the current one, before it is taken and learning ends; after learning only the learned
   * source counts. While learning after a re-INVITE, the source learned before is still heard. Compares strings and numbers only: nothing is allocated.
   */
  #fromFarEnd(address: string, port: number, sequence: number): boolean {
    const fromTarget = port === this.#remotePort && address === this.#remoteAddress;
    if (!this.#strict) {
      if (!fromTarget) this.#switchSource(address, port);
      return true;
    }
    if (!this.#learning) return fromTarget;
    if (fromTarget) {
      // The far end sends from where we send: a source on probation starts over.
      this.#candidateRun = 0;
      this.#targetRun = this.#targetRun > 0 && sequence === ((this.#targetSequence + 1) & 0xffff) ? this.#targetRun + 1 : 1;
      this.#targetSequence = sequence;
      if (this.#targetRun >= this.#probation) this.#learning = false;
      return true;
    }
    if (port === this.#previousPort && address === this.#previousAddress) return true;
    // The far end said it sends nothing (we only send, or neither does): nobody else is learned.
    const direction = this.#parameters?.direction;
    if (direction === 'sendonly' || direction === 'inactive') return false;
    if (this.#candidateRun > 0 && port === this.#candidatePort && address === this.#candidateAddress && sequence === ((this.#candidateSequence + 1) & 0xffff)) {
      this.#candidateRun += 1;
    } else {
      this.#candidateAddress = address;
      this.#candidatePort = port;
      this.#candidateRun = 1;
    }
    this.#candidateSequence = sequence;
    if (this.#candidateRun < this.#probation) return false;
    this.#switchSource(address, port);
    this.#learning = false;
    this.#candidateRun = 0;
    return true;
  }

  /** Media goes to `address`:`port` from now on (and RTCP, when it shares the RTP port). */
  #switchSource(address: string, port: number): void {
    this.#remoteAddress = address;
    this.#remotePort = port;
    if (this.#parameters?.rtcpMux && !this.#rtcpLatched) {
      this.#rtcpAddress = address;
      this.#rtcpPort = port;
    }
  }

  readonly #onRtcpMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (!this.#closed) this.#takeRtcp(message, rinfo, false);
  };

  /**
   * A report from the far end. Only from the address the media comes from (or is sent to), so a
   * stranger cannot feed the statistics; its source becomes where our reports go.
   */
  #takeRtcp(message: Buffer, rinfo: dgram.RemoteInfo, muxed: boolean): void {
    const sender = this.#sender;
    // Before the far end's address is known (a held call's 0.0.0.0) nothing is taken.
    if (!sender || this.#remoteAddress === undefined) return;
    if (rinfo.address !== this.#remoteAddress || (this.#strict && !this.#rtcpFromFarEnd(rinfo.port, muxed))) {
      this.strangerReports += 1;
      this.#totals.strangerReports += 1;
      return;
    }
    if (!this.#rtcp.receive(message, message.length, sender.ssrc, performance.now(), unixNowMs())) return;
    if (muxed === (this.#parameters?.rtcpMux === true)) {
      this.#rtcpLatched = true;
      this.#rtcpAddress = rinfo.address;
      this.#rtcpPort = rinfo.port;
    }
  }

  /**
   * Strict RTP for reports (the address was checked already): muxed ones only from the port the
   * media comes from; on the RTCP port, once a report was taken, only from that report's port
   * (the first one may come from any port of the far end's address: NAT maps RTCP apart).
   */
  #rtcpFromFarEnd(port: number, muxed: boolean): boolean {
    if (muxed) return port === this.#remotePort;
    return !this.#rtcpLatched || port === this.#rtcpPort;
  }
}

function ignoreSocketError(): void {
  // ICMP port unreachable and the like: the stream goes on.
}

/** The wall clock with sub-millisecond precision (NTP timestamps of sender reports). */
function unixNowMs(): number {
  return performance.timeOrigin + performance.now();
}
