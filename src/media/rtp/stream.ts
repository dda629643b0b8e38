// The media of one SIP call: a UDP socket pair from the configured RTP port range (RTP on an even
// port, RTCP on the odd one above it), audio coded by the RTP library (G.711, and G.722 and Opus
// with coders of the stream's own; received audio is delivered at the sending codec's rate), RFC 4733
// telephone-events both ways or DTMF as tones in the audio (dtmf_mode inband, inband-dtmf.ts), and
// strict RTP (source-learning.ts): packets from strangers are dropped (counted); with symmetric
// RTP (the endpoint's rtp_symmetric) media goes to where the far end's packets come from once a
// source is learned, else to the SDP's address. Frames written by
// the channel leave at once (one packet per 20 ms frame); received audio goes through the adaptive
// jitter buffer (or, with it off, the plain receive queue, audio-receive.ts) and reaches the
// channel one frame per media clock tick. RTCP (rtcp-link.ts): a report every
// sip.rtcp_interval_ms, the far end's reports read, BYE at the end; on the RTP port when rtcp-mux
// was agreed (RTCP is told from RTP by its packet type there, RFC 5761).
// Per packet nothing is allocated: the header, the scratch buffers and the packet rings are reused.
import type dgram from 'node:dgram';
import type { MediaSocket } from './media-socket.ts';
import { performance } from 'node:perf_hooks';
import type { Frame, SampleRate } from '../frame.ts';
import { PlainReceivePath, receiveRtpAudio, type ReceivePath } from './audio-receive.ts';
import { ReceiveQueue } from './receive-queue.ts';
import { InbandDtmf } from './inband-dtmf.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import { OutgoingRate } from './outgoing-rate.ts';
import { parseRtpPacket, RtpHeader } from './packet.ts';
import { codersByPayloadType, releaseReplacedCoders, RtpPayloadCoder } from './payload.ts';
import { closeQuietly } from './port-range.ts';
import { RtpReceiverStats } from './receiver-stats.ts';
import { RtcpLink } from './rtcp-link.ts';
import { looksLikeRtcp } from './rtcp-packet.ts';
import type { RtcpSession } from './rtcp-session.ts';
import { RtpSender } from './sender.ts';
import { RtpSourceLearning } from './source-learning.ts';
import { rtpStatistics, writeRtpStatistics, type RtpStatistics } from './statistics.ts';
import { TelephoneEventReceiver, TelephoneEventSender, TELEPHONE_EVENT_PAYLOAD_BYTES } from './telephone-event.ts';
import { RtpStreamTotals, type StreamClock, type StreamEvents, type StreamOptions, type StreamParameters } from './stream-types.ts';

// The stream's parameters, options, events and totals (stream-types.ts), for importers of the stream too.
export { RtpStreamTotals, type StreamClock, type StreamDirection, type StreamEvents, type StreamOptions, type StreamParameters } from './stream-types.ts';

export class RtpStream {
  readonly socket: MediaSocket;
  readonly rtcpSocket: MediaSocket | undefined;
  readonly localPort: number;
  #parameters: StreamParameters | undefined;
  #coder: RtpPayloadCoder | undefined;
  /** Decoders by payload type (0..127) of what the far end may send; a sparse array, looked up per packet without allocating. */
  #receiveCoders: Array<RtpPayloadCoder | undefined> = [];
  #sender: RtpSender | undefined;
  #receiver: RtpReceiverStats | undefined;
  #outgoing = new OutgoingRate(8000);
  #receive: ReceivePath;
  #jitterBuffer: JitterBuffer | undefined;
  readonly #jitterOptions: StreamOptions['jitterBuffer'];
  readonly #rtcp: RtcpLink;
  readonly #source: RtpSourceLearning;
  readonly #strict: boolean;
  readonly #symmetric: boolean;
  readonly #header = new RtpHeader();
  #digitsOut = new TelephoneEventSender(8000);
  #digitsIn: TelephoneEventReceiver;
  /** The clock of both (telephoneEventRate). */
  #eventRate = 8000;
  readonly #inband: InbandDtmf;
  /** Digits waiting behind the one being sent. */
  readonly #pendingDigits: { digit: string; durationMs: number }[] = [];
  /** The address the far end's SDP gave last: a different one starts learning again. */
  #sdpAddress: string | undefined;
  #sdpPort = 0;
  /** RTP packets dropped because they came from a source other than the learned one (or one on probation). */
  strangerPackets = 0;
  /** RTCP packets dropped because they came from elsewhere than the far end. */
  strangerReports = 0;
  /** SRTP and SRTCP packets dropped: they failed authentication or were replayed. */
  srtpRefusedPackets = 0;
  /** The technology's totals (a private object when none was given). */
  readonly #totals: RtpStreamTotals;
  /** A stranger's packet was dropped after learning already (it is reported once). */
  #strangerReported = false;
  /** Something (RTP or RTCP) came from the far end since its address was last set. */
  #heardFarEnd = false;
  /** When media was first sent unanswered to the current address (performance.now()). */
  #unansweredSince: number | undefined;
  /** Sending stopped once for want of an answer (see StreamParameters.unansweredLimitMs). */
  unansweredStopped = false;
  #closed = false;
  /** Echo()'s reflection (reflect()): audio packets go straight back, undecoded. */
  #reflecting = false;
  /** What is added to the far end's RTP timestamps of reflected packets, set at the first one of a source. */
  #reflectOffset: number | undefined;
  #reflectSsrc = -1;
  /** A two-party relay's packet path (relayPacketsTo()): audio packets of the codec the peer sends go to it as they are. */
  #packetPeer: RtpStream | undefined;
  /** Received audio has no reader (skipAudio()): packets are counted but not decoded or buffered. */
  #skippingAudio = false;
  /** The clock's dropped ticks as last told to the jitter buffer (JitterBuffer.ticksSkipped). */
  #skippedTicksSeen: number;
  /** The clock tick of the last frame the channel wrote: relayed packets give way to it (see #takeRelayed). */
  #wroteTick = -2;
  /** The clock tick of the last packet sent (rtp_keepalive counts from it; from the first configure before any). */
  #sentTick = -1;

  constructor(
    socket: MediaSocket,
    private readonly clock: StreamClock,
    private readonly events: StreamEvents,
    options: StreamOptions = {},
  ) {
    this.socket = socket;
    this.rtcpSocket = options.rtcpSocket;
    this.localPort = socket.address().port;
    this.#digitsIn = this.#digitReceiver(8000);
    this.#inband = new InbandDtmf((digit, durationMs) => this.events.onDigit(digit, durationMs));
    this.#symmetric = options.symmetric ?? true;
    this.#rtcp = new RtcpLink(socket, options.rtcpSocket, options.rtcpIntervalMs ?? 5000, this.#symmetric);
    this.#strict = options.strictRtp ?? true;
    const probation = Math.max(1, Math.floor(options.probation ?? 4));
    this.#source = new RtpSourceLearning(this.#strict, probation, (address, port) => this.#rtcp.followSource(address, port));
    this.#totals = options.totals ?? new RtpStreamTotals();
    this.#jitterOptions = options.jitterBuffer;
    this.#jitterBuffer = this.#jitterOptions ? new JitterBuffer({ rate: 8000, ...this.#jitterOptions }) : undefined;
    this.#receive = this.#jitterBuffer ?? new PlainReceivePath();
    this.#skippedTicksSeen = clock.skippedTicks ?? 0;
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
    return this.#rtcp.session;
  }

  /** Applies (or changes, on a re-INVITE) what offer/answer agreed. */
  configure(parameters: StreamParameters): void {
    // New coder options (the far end's Opus fmtp in a re-INVITE) take a new encoder, as a new codec does.
    const codecChanged =
      parameters.codec !== this.#parameters?.codec ||
      parameters.payloadType !== this.#parameters?.payloadType ||
      JSON.stringify(parameters.coderOptions) !== JSON.stringify(this.#parameters?.coderOptions);
    const wasInband = this.#parameters?.inbandDtmf === true;
    const first = this.#parameters === undefined;
    const previousCoders = this.#receiveCoders;
    const previousCoder = this.#coder;
    this.#parameters = parameters;
    if (first) this.#sentTick = this.clock.ticks;
    if (codecChanged || !this.#coder) {
      this.#coder = new RtpPayloadCoder(parameters.codec, parameters.payloadType, parameters.coderOptions);
      const previous = this.#sender;
      // With SRTP the sequence goes on: a jump would make the far end guess another ROC (RFC 3711 App. A).
      const sequence = parameters.protection ? previous?.nextSequence : undefined;
      this.#sender = new RtpSender(this.#coder, previous ? { ssrc: previous.ssrc, sequence, timestamp: previous.timestamp } : {});
      this.#receiver ??= new RtpReceiverStats(this.#coder.codec.clockRate);
      this.#outgoing = new OutgoingRate(this.#coder.rate);
      if (this.#receive.rate !== this.#coder.rate) this.#receiveAt(this.#coder.rate);
    }
    // A new media address in the SDP (the call's first, or a re-INVITE moving it): send there and
    // learn the source again. The same address again (a codec change, hold) keeps what was learned.
    const moved = first || parameters.remoteAddress !== this.#sdpAddress || parameters.remotePort !== this.#sdpPort;
    if (moved) {
      this.#sdpAddress = parameters.remoteAddress;
      this.#sdpPort = parameters.remotePort;
      this.#source.restart(parameters.remoteAddress, parameters.remotePort, first, parameters.otherFarEnd === true);
      this.#heardFarEnd = false;
      this.#unansweredSince = undefined;
    }
    this.#rtcp.configure(parameters, moved);
    if (parameters.inbandDtmf && !wasInband) this.#inband.reset();
    // Inband digits are heard in decoded audio: a reflecting stream goes back to decoding.
    if (parameters.inbandDtmf) this.#reflecting = false;
    // Events on another clock (48000 beside Opus): durations count on it. A digit under way ends.
    const eventRate = parameters.telephoneEventRate ?? 8000;
    if (eventRate !== this.#eventRate) {
      this.#eventRate = eventRate;
      this.#digitsOut = new TelephoneEventSender(eventRate);
      this.#digitsIn = this.#digitReceiver(eventRate);
    }
    this.#receiveCoders = codersByPayloadType(this.#coder, parameters.receiveCodecs, parameters.coderOptions);
    // Coders no longer used are freed now: a worker's Opus (WebAssembly) heap never shrinks.
    releaseReplacedCoders(previousCoders, previousCoder, this.#receiveCoders);
  }

  /**
   * Received audio is delivered at `rate` from now on (the sending codec's: the channel's native
   * rate). A new receive path: what the old jitter buffer counted goes to the totals first.
   */
  #receiveAt(rate: SampleRate): void {
    const previous = this.#jitterBuffer;
    if (previous) {
      this.#totals.latePackets += previous.late;
      this.#totals.concealedFrames += previous.concealed;
    }
    this.#jitterBuffer = this.#jitterOptions ? new JitterBuffer({ rate, ...this.#jitterOptions }) : undefined;
    this.#receive = this.#jitterBuffer ?? new PlainReceivePath(new ReceiveQueue(rate));
  }

  #digitReceiver(clockRate: number): TelephoneEventReceiver {
    return new TelephoneEventReceiver(clockRate, (digit, durationMs) => this.events.onDigit(digit, durationMs));
  }

  statistics(): RtpStatistics | undefined {
    if (this.#closed || !this.#sender || !this.#receiver) return undefined;
    return rtpStatistics(this.#sender, this.#receiver, this.#rtcp.session);
  }

  /** statistics() stored as numbers from `offset` (statistics.ts), without allocating; false when there are none. */
  statisticsInto(into: Float64Array, offset: number): boolean {
    if (this.#closed || !this.#sender || !this.#receiver) return false;
    writeRtpStatistics(this.#sender, this.#receiver, this.#rtcp.session, into, offset);
    return true;
  }

  /**
   * Echo()'s cheapest loop: while on, every audio packet of the codec we send is sent straight back
   * with its payload as is — nothing decoded, buffered or encoded — and no frame is delivered.
   * False (and off) when the audio must be decoded: inband DTMF is listened for.
   */
  reflect(on: boolean): boolean {
    this.#reflecting = on && this.#parameters?.inbandDtmf !== true;
    this.#reflectOffset = undefined;
    return this.#reflecting === on;
  }

  get reflecting(): boolean {
    return this.#reflecting;
  }

  /**
   * A two-party relay's cheapest path (media workers): while given a peer, every audio packet
   * received in the codec the peer sends goes to the peer's far end with its payload as is — not
   * decoded, buffered or encoded — on the peer's SSRC, sequence and timestamps (RFC 3550: the
   * sender owns them; the marker bit starts each new source), as Asterisk's native RTP bridge
   * passes packets; no frame is delivered for it. Packets the peer cannot take as they are (another
   * codec, inband DTMF listened for on either side) are decoded and delivered as before, for the
   * owner to pass on as frames.
   */
  relayPacketsTo(peer: RtpStream | undefined): void {
    if (peer === this) return;
    this.#packetPeer = peer;
    if (peer) peer.#reflectOffset = undefined;
  }

  /**
   * While on, nothing reads the received audio (a media worker plays a sound to the stream by
   * itself): its packets still count for the statistics, strict-RTP learning, the RTP timeout and
   * RFC 4733 digits, but are not decoded nor jitter-buffered, and no frame is delivered — the
   * decode was most of a playing worker's receive cost. Inband DTMF is heard in decoded audio, so
   * a stream listening for it keeps decoding. Off: the receive path starts afresh, as after a gap
   * (no frame from before the skip is delivered late).
   */
  skipAudio(on: boolean): void {
    if (on === this.#skippingAudio) return;
    this.#skippingAudio = on;
    if (!on) this.#receive.reset();
  }

  /** One 20 ms frame from the channel towards the far end. */
  writeFrame(frame: Frame): void {
    this.#wroteTick = this.clock.ticks;
    const sender = this.#sender;
    if (this.#closed || !sender || !this.#canSend() || this.#digitsOut.active || this.#inband.playing) return;
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
    // Nothing codes on a closed stream (every way in checks #closed): its coders are freed now.
    releaseReplacedCoders(this.#receiveCoders, this.#coder, []);
    // Close each socket once what was sent on it has left (the BYE is sent asynchronously).
    this.#rtcp.bye(this.#sender, this.#receiver, () => {
      closeQuietly(this.socket);
      if (this.rtcpSocket) closeQuietly(this.rtcpSocket);
    });
  }

  #canSend(): boolean {
    const direction = this.#parameters?.direction;
    return this.#sendAddress() !== undefined && this.#sendPort() > 0 && (direction === 'sendrecv' || direction === 'sendonly') && this.#withinUnansweredLimit();
  }

  /** False once media has gone unanswered to a foreign address for longer than allowed (see unansweredLimitMs). */
  #withinUnansweredLimit(): boolean {
    const limit = this.#parameters?.unansweredLimitMs;
    if (limit === undefined || this.#heardFarEnd) return true;
    const now = performance.now();
    this.#unansweredSince ??= now;
    if (now - this.#unansweredSince <= limit) return true;
    if (!this.unansweredStopped) {
      this.unansweredStopped = true;
      this.events.onUnanswered?.(this.#sendAddress() ?? '', this.#sendPort());
    }
    return false;
  }

  #send(packet: Buffer, length: number): void {
    const protection = this.#parameters?.protection;
    const size = protection ? protection.protectRtp(packet, length) : length;
    // No callback: Node then neither schedules one per packet nor reports send errors (an
    // unreachable far end is not fatal to the call), which is what the callback did by doing nothing.
    if (size > 0) this.socket.send(packet, 0, size, this.#sendPort(), this.#sendAddress()!);
    this.#sentTick = this.clock.ticks;
  }

  /**
   * rtp_keepalive: nothing sent for the interval, one comfort-noise packet (RFC 3389, static payload
   * type 13, marker set, the lowest level: -127 dBov) goes, as res_rtp_asterisk's keepalive does. It
   * goes whatever the direction (a hold included): it keeps a NAT binding open, it carries no audio.
   */
  #keepalive(sender: RtpSender, keepaliveMs: number): void {
    if (this.clock.ticks - this.#sentTick < Math.ceil(keepaliveMs / FRAME_MS)) return;
    if (this.#sendAddress() === undefined || this.#sendPort() <= 0 || !this.#withinUnansweredLimit()) return;
    const length = sender.other(COMFORT_NOISE_PT, true, undefined, this.clock.ticks, writeSilentComfortNoise);
    this.#send(sender.packet, length);
  }

  /** Where media goes: the learned source with symmetric RTP, else the SDP's address. */
  #sendAddress(): string | undefined {
    return this.#symmetric ? this.#source.address : this.#sdpAddress;
  }

  #sendPort(): number {
    return this.#symmetric ? this.#source.port : this.#sdpPort;
  }

  readonly #writeEvent = (dst: Buffer, offset: number): number => {
    this.#digitsOut.next(dst, offset);
    return TELEPHONE_EVENT_PAYLOAD_BYTES;
  };

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
        if (!this.#inband.playing && this.#pendingDigits.length > 0) {
          const next = this.#pendingDigits.shift()!;
          this.#inband.play(next.digit, next.durationMs);
        }
        const toneFrame = this.#inband.nextFrame();
        if (toneFrame) {
          const length = sender.audio(this.#outgoing.samples(toneFrame), this.clock.ticks);
          this.#send(sender.packet, length);
        }
      }
    }
    const keepaliveMs = parameters?.keepaliveMs;
    if (sender && keepaliveMs !== undefined && keepaliveMs > 0) this.#keepalive(sender, keepaliveMs);
    const now = performance.now();
    const skipped = this.clock.skippedTicks ?? 0;
    if (skipped !== this.#skippedTicksSeen) {
      this.#jitterBuffer?.ticksSkipped(skipped - this.#skippedTicksSeen);
      this.#skippedTicksSeen = skipped;
    }
    const frame = this.#skippingAudio && !parameters?.inbandDtmf ? undefined : this.#receive.next(now);
    if (frame) {
      if (parameters?.inbandDtmf) this.#inband.detect(frame);
      this.events.onFrame(frame);
    }
    if (sender) this.#rtcp.reportIfDue(sender, this.#receiver, now);
  };

  readonly #onMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.#closed) return;
    if (looksLikeRtcp(message, message.length)) {
      this.#takeRtcp(message, rinfo, true);
      return;
    }
    const header = this.#header;
    const parameters = this.#parameters;
    if (!parameters) return;
    const length = parameters.protection ? parameters.protection.unprotectRtp(message, message.length) : message.length;
    if (length < 0) {
      this.#refused();
      return;
    }
    if (!parseRtpPacket(message, length, header)) return;
    const coder = this.#receiveCoders[header.payloadType];
    if (!coder && header.payloadType !== parameters.telephoneEventPt) return;
    const farEndSends = parameters.direction !== 'sendonly' && parameters.direction !== 'inactive';
    if (!this.#source.accept(rinfo.address, rinfo.port, header.sequence, farEndSends)) {
      this.strangerPackets += 1;
      this.#totals.strangerPackets += 1;
      // A source on probation while learning is no news (a phone behind NAT); one once the source is locked is.
      if (!this.#source.learning && !this.#strangerReported) {
        this.#strangerReported = true;
        this.events.onStranger?.(rinfo.address, rinfo.port);
      }
      return;
    }
    const now = performance.now();
    // Only the address media goes to can vouch for it: a learned source elsewhere (rtp_symmetric=no)
    // must not let an SDP keep our RTP aimed at a third party.
    if (rinfo.address === this.#sendAddress()) this.#heardFarEnd = true;
    this.#receiver?.count(header, now);
    if (!farEndSends) return;
    if (header.payloadType === parameters.telephoneEventPt) {
      this.#digitsIn.push(message, header.payloadStart, header.payloadEnd, header.timestamp);
      return;
    }
    if (this.#reflecting && header.payloadType === parameters.payloadType) this.#reflectPacket(message, header);
    else if (coder && this.#packetPeer && !parameters.inbandDtmf && this.#packetPeer.#takeRelayed(message, header, coder)) return;
    else if (coder && (!this.#skippingAudio || parameters.inbandDtmf)) receiveRtpAudio(coder, message, header, this.#receive, now);
  };

  /** An audio packet sent back as it came (reflect()), on our SSRC and sequence, its timing kept. */
  #reflectPacket(message: Buffer, header: RtpHeader): void {
    const sender = this.#sender;
    if (!sender || !this.#canSend() || this.#digitsOut.active || this.#inband.playing) return;
    const first = this.#reflectOffset === undefined || header.ssrc !== this.#reflectSsrc;
    if (first) {
      this.#reflectSsrc = header.ssrc;
      // Our timestamps go on from where they were (the marker bit says a new run starts).
      this.#reflectOffset = (sender.timestamp - header.timestamp) >>> 0;
    }
    const timestamp = (header.timestamp + this.#reflectOffset!) >>> 0;
    const length = sender.copy(message, header.payloadStart, header.payloadEnd, timestamp, first, this.clock.ticks);
    this.#send(sender.packet, length);
  }

  /**
   * A packet of the relay's other stream, in `coder`'s codec: sent on as it is when this stream
   * sends that codec (true, also when it is dropped because nothing may be sent now, as a frame
   * would be); false when it must be decoded instead: another codec, inband DTMF, or the channel
   * wrote frames of its own a moment ago (they win while the relay winds down).
   */
  #takeRelayed(message: Buffer, header: RtpHeader, coder: RtpPayloadCoder): boolean {
    const mine = this.#coder;
    if (this.#closed || !mine || this.#parameters?.inbandDtmf) return false;
    if (mine.codec.name !== coder.codec.name || mine.codec.clockRate !== coder.codec.clockRate) return false;
    if (this.clock.ticks - this.#wroteTick <= 1) return true;
    this.#forwardPacket(message, header, mine.codec.clockRate);
    return true;
  }

  /** Another stream's packet sent on: our SSRC and sequence, its timestamps moved onto ours (one frame on from our last). */
  #forwardPacket(message: Buffer, header: RtpHeader, clockRate: number): void {
    const sender = this.#sender;
    if (!sender || !this.#canSend() || this.#digitsOut.active || this.#inband.playing) return;
    const first = this.#reflectOffset === undefined || header.ssrc !== this.#reflectSsrc;
    if (first) {
      this.#reflectSsrc = header.ssrc;
      this.#reflectOffset = (sender.timestamp + clockRate / 50 - header.timestamp) >>> 0;
    }
    const timestamp = (header.timestamp + this.#reflectOffset!) >>> 0;
    const length = sender.copy(message, header.payloadStart, header.payloadEnd, timestamp, first, this.clock.ticks);
    this.#send(sender.packet, length);
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
    if (!sender || this.#source.address === undefined) return;
    const taken = this.#rtcp.take(message, rinfo.address, rinfo.port, muxed, this.#source, this.#strict, sender.ssrc);
    if (taken === 'refused') return this.#refused();
    if (taken === 'stranger') {
      this.strangerReports += 1;
      this.#totals.strangerReports += 1;
      return;
    }
    if (rinfo.address === this.#sendAddress()) this.#heardFarEnd = true;
  }

  /** An SRTP/SRTCP packet failed its check: dropped, counted, never delivered. */
  #refused(): void {
    this.srtpRefusedPackets += 1;
    this.#totals.srtpRefusedPackets += 1;
  }
}

function ignoreSocketError(): void {
  // ICMP port unreachable and the like: the stream goes on.
}

/** The static payload type of comfort noise (RFC 3551). */
const COMFORT_NOISE_PT = 13;
/** Milliseconds of one media clock tick. */
const FRAME_MS = 20;

/** A comfort-noise payload of one byte: the noise level, 127 (-127 dBov: silence). */
function writeSilentComfortNoise(dst: Buffer, offset: number): number {
  dst[offset] = 127;
  return 1;
}
