// The media of one SIP call: a UDP socket from the configured RTP port range, G.711 audio coded
// by the RTP library, RFC 4733 telephone-events both ways, and symmetric RTP (we send to where
// the far end's packets come from once they come, RFC 4961 in spirit, for phones behind NAT).
// Frames written by the channel leave at once (one packet per 20 ms frame); received audio is
// re-framed by the receive queue and handed to the channel one frame per media clock tick.
// Per packet nothing is allocated: the header, the scratch buffers and the packet ring are reused.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { Frame } from '../../media/frame.ts';
import { OutgoingRate } from '../../media/rtp/outgoing-rate.ts';
import { parseRtpPacket, RtpHeader } from '../../media/rtp/packet.ts';
import { RtpPayloadCoder } from '../../media/rtp/payload.ts';
import { ReceiveQueue } from '../../media/rtp/receive-queue.ts';
import { RtpReceiverStats } from '../../media/rtp/receiver-stats.ts';
import { RtpSender } from '../../media/rtp/sender.ts';
import { rtpStatistics, type RtpStatistics } from '../../media/rtp/statistics.ts';
import { TelephoneEventReceiver, TelephoneEventSender, TELEPHONE_EVENT_PAYLOAD_BYTES } from '../../media/rtp/telephone-event.ts';

export type StreamDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What offer/answer agreed, as the stream needs it. */
export interface StreamParameters {
  /** `ulaw` or `alaw`. */
  readonly codec: string;
  readonly payloadType: number;
  readonly telephoneEventPt?: number;
  readonly remoteAddress?: string;
  readonly remotePort: number;
  readonly direction: StreamDirection;
}

export interface StreamEvents {
  /** A whole digit received as telephone-events. */
  onDigit(digit: string, durationMs: number): void;
  /** One 20 ms frame of received audio, on a media clock tick. */
  onFrame(frame: Frame): void;
}

/** The media clock as the stream needs it. */
export interface StreamClock {
  readonly ticks: number;
  onTick(listener: () => void): void;
  offTick(listener: () => void): void;
}

/** Even ports from a range, handed out round-robin; a port in use is skipped. */
export class RtpPortRange {
  #next: number;

  constructor(
    readonly start: number,
    readonly end: number,
  ) {
    this.#next = start + (start % 2);
  }

  /** Binds a UDP socket on the next free even port of the range (RTCP would take port + 1). */
  async bind(address: string): Promise<dgram.Socket> {
    const count = Math.max(1, Math.floor((this.end - this.start) / 2) + 1);
    for (let attempt = 0; attempt < Math.min(count, 64); attempt++) {
      const port = this.#next;
      this.#next += 2;
      if (this.#next > this.end) this.#next = this.start + (this.start % 2);
      const socket = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
      const bound = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(port, address, () => resolve(true));
      });
      if (bound) {
        socket.removeAllListeners('error');
        return socket;
      }
      try {
        socket.close();
      } catch {
        // never bound
      }
    }
    throw new Error(`no free RTP port in ${this.start}-${this.end}`);
  }
}

export class RtpStream {
  readonly socket: dgram.Socket;
  readonly localPort: number;
  #parameters: StreamParameters | undefined;
  #coder: RtpPayloadCoder | undefined;
  #sender: RtpSender | undefined;
  #receiver: RtpReceiverStats | undefined;
  #outgoing = new OutgoingRate(8000);
  readonly #queue = new ReceiveQueue(8000);
  readonly #header = new RtpHeader();
  readonly #digitsOut = new TelephoneEventSender(8000);
  readonly #digitsIn: TelephoneEventReceiver;
  /** Digits waiting behind the one being sent. */
  readonly #pendingDigits: { digit: string; durationMs: number }[] = [];
  #remoteAddress: string | undefined;
  #remotePort = 0;
  /** Symmetric RTP: once a packet came from an address, send there. */
  #latched = false;
  #closed = false;

  constructor(
    socket: dgram.Socket,
    private readonly clock: StreamClock,
    private readonly events: StreamEvents,
  ) {
    this.socket = socket;
    this.localPort = socket.address().port;
    this.#digitsIn = new TelephoneEventReceiver(8000, (digit, durationMs) => this.events.onDigit(digit, durationMs));
    socket.on('message', this.#onMessage);
    socket.on('error', () => {
      // ICMP port unreachable and the like: the stream goes on.
    });
    clock.onTick(this.#tick);
  }

  get parameters(): StreamParameters | undefined {
    return this.#parameters;
  }

  /** Applies (or changes, on a re-INVITE) what offer/answer agreed. */
  configure(parameters: StreamParameters): void {
    const codecChanged = parameters.codec !== this.#parameters?.codec || parameters.payloadType !== this.#parameters?.payloadType;
    this.#parameters = parameters;
    if (codecChanged || !this.#coder) {
      this.#coder = new RtpPayloadCoder(parameters.codec, parameters.payloadType);
      const previous = this.#sender;
      this.#sender = new RtpSender(this.#coder, previous ? { ssrc: previous.ssrc, sequence: undefined, timestamp: previous.timestamp } : {});
      this.#receiver ??= new RtpReceiverStats(this.#coder.codec.clockRate);
      this.#outgoing = new OutgoingRate(this.#coder.rate);
    }
    if (!this.#latched) {
      this.#remoteAddress = parameters.remoteAddress;
      this.#remotePort = parameters.remotePort;
    }
  }

  statistics(): RtpStatistics | undefined {
    if (this.#closed || !this.#sender || !this.#receiver) return undefined;
    return rtpStatistics(this.#sender, this.#receiver);
  }

  /** One 20 ms frame from the channel towards the far end. */
  writeFrame(frame: Frame): void {
    const sender = this.#sender;
    if (this.#closed || !sender || !this.#canSend() || this.#digitsOut.active) return;
    const length = sender.audio(this.#outgoing.samples(frame), this.clock.ticks);
    this.#send(sender.packet, length);
  }

  /** A digit as RFC 4733 events; false when the far end did not agree to telephone-event. */
  sendDigit(digit: string, durationMs: number): boolean {
    if (this.#closed || this.#parameters?.telephoneEventPt === undefined) return false;
    if (this.#pendingDigits.length >= 64) return true;
    this.#pendingDigits.push({ digit, durationMs });
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.clock.offTick(this.#tick);
    this.socket.off('message', this.#onMessage);
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }

  #canSend(): boolean {
    const direction = this.#parameters?.direction;
    return this.#remoteAddress !== undefined && this.#remotePort > 0 && (direction === 'sendrecv' || direction === 'sendonly');
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

  readonly #tick = (): void => {
    if (this.#closed) return;
    // DTMF out: one event packet per tick while a digit is being sent.
    const sender = this.#sender;
    const eventPt = this.#parameters?.telephoneEventPt;
    if (sender && eventPt !== undefined && this.#canSend()) {
      if (!this.#digitsOut.active && this.#pendingDigits.length > 0) {
        const next = this.#pendingDigits.shift()!;
        this.#digitsOut.begin(next.digit, next.durationMs, sender.timestamp);
      }
      if (this.#digitsOut.active) {
        const length = sender.other(eventPt, this.#digitsOut.marker, this.#digitsOut.timestamp, this.clock.ticks, this.#writeEvent);
        // The marker is known only once next() ran inside #writeEvent: set it on the header now.
        if (this.#digitsOut.marker) sender.packet[1] |= 0x80;
        else sender.packet[1] &= 0x7f;
        this.#send(sender.packet, length);
      }
    }
    const frame = this.#queue.next();
    if (frame) this.events.onFrame(frame);
  };

  readonly #onMessage = (message: Buffer, rinfo: dgram.RemoteInfo): void => {
    if (this.#closed) return;
    const header = this.#header;
    if (!parseRtpPacket(message, message.length, header)) return;
    const parameters = this.#parameters;
    const coder = this.#coder;
    if (!parameters || !coder) return;
    if (header.payloadType !== coder.payloadType && header.payloadType !== parameters.telephoneEventPt) return;
    if (!this.#latched || rinfo.port !== this.#remotePort || rinfo.address !== this.#remoteAddress) {
      this.#latched = true;
      this.#remoteAddress = rinfo.address;
      this.#remotePort = rinfo.port;
    }
    this.#receiver?.update(header.ssrc, header.sequence, header.timestamp, header.payloadBytes, performance.now());
    if (parameters.direction === 'sendonly' || parameters.direction === 'inactive') return;
    if (header.payloadType === parameters.telephoneEventPt) {
      this.#digitsIn.push(message, header.payloadStart, header.payloadEnd, header.timestamp);
      return;
    }
    const count = coder.samplesIn(header.payloadStart, header.payloadEnd);
    if (count === 0) return;
    const samples = this.#queue.scratch(count);
    coder.decode(message, header.payloadStart, header.payloadEnd, samples);
    this.#queue.pushFrom(samples, count);
  };
}
