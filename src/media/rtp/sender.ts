// The sending side of one RTP stream: SSRC, sequence numbers and timestamps (advanced by the
// media clock, so a gap in the audio advances the timestamp too and sets the marker), the packet
// and octet counts a sender report needs, and packets built into a ring of preallocated buffers.
import { randomInt } from 'node:crypto';
import { samplesPerFrame } from '../frame.ts';
import { RTP_HEADER_BYTES, RTP_SEQ_MOD, writeRtpHeader } from './packet.ts';
import type { RtpPayloadCoder } from './payload.ts';
import { MAX_PROTECTION_OVERHEAD } from './protection.ts';

/**
 * Packets in flight before a buffer is reused. Node does not copy a datagram: libuv reads it from
 * the buffer when it sends it — before send() returns on the media sockets (literal-lookup.ts),
 * but later when the socket's send buffer is full (libuv queues it) or an address is looked up
 * (the next tick). Either way it has left long before this many 20 ms packets follow it.
 */
const RING_SIZE = 16;
/** The largest payload a packet carries: more than any coded here (20 ms of slin16) needs. */
const MAX_PAYLOAD_BYTES = 1280;
/**
 * The slots' payload room at first for a sample codec: its 20 ms frame (G.711: 160 bytes), so a
 * G.711 stream's ring is 16 × 204 bytes instead of 16 × 1,324 (issue 25, memory per call).
 */
function firstPayloadRoom(coder: RtpPayloadCoder): number {
  const frameBytes = coder.bytesFor(samplesPerFrame(coder.rate));
  // Frame codecs (G.722, Opus) say 0: their packets' sizes are the encoder's, so they get the most at once.
  return frameBytes > 0 ? Math.min(frameBytes, MAX_PAYLOAD_BYTES) : MAX_PAYLOAD_BYTES;
}

export interface RtpSenderOptions {
  readonly ssrc?: number;
  readonly sequence?: number;
  readonly timestamp?: number;
}

export class RtpSender {
  readonly ssrc: number;
  readonly #coder: RtpPayloadCoder;
  /** Timestamp units in one 20 ms frame. */
  readonly #frameUnits: number;
  /** The slots, views of one buffer; they grow to MAX_PAYLOAD_BYTES once if a bigger payload comes (#room). */
  #ring: Buffer[];
  /** Payload bytes each slot has room for now. */
  #room: number;
  #slot = 0;
  #sequence: number;
  #timestamp: number;
  #lastTick: number | undefined;
  /** Packets and payload octets sent (RTCP SR). */
  packets = 0;
  octets = 0;
  /** The buffer of the packet built last (valid until RING_SIZE more are built). */
  packet: Buffer;

  constructor(coder: RtpPayloadCoder, options: RtpSenderOptions = {}) {
    this.#coder = coder;
    this.#frameUnits = samplesPerFrame(coder.codec.clockRate);
    this.ssrc = options.ssrc ?? randomInt(0, 0x1_0000_0000);
    this.#sequence = options.sequence ?? randomInt(0, RTP_SEQ_MOD);
    this.#timestamp = options.timestamp ?? randomInt(0, 0x1_0000_0000);
    this.#room = firstPayloadRoom(coder);
    this.#ring = RtpSender.#slots(this.#room);
    this.packet = this.#ring[0];
  }

  static #slots(payloadRoom: number): Buffer[] {
    const slotBytes = RTP_HEADER_BYTES + payloadRoom + MAX_PROTECTION_OVERHEAD;
    const memory = Buffer.alloc(RING_SIZE * slotBytes);
    return Array.from({ length: RING_SIZE }, (_, slot) => memory.subarray(slot * slotBytes, (slot + 1) * slotBytes));
  }

  /**
   * Room in every slot for `payloadBytes` (at most MAX_PAYLOAD_BYTES): the ring is made anew at
   * the most there is once, the first time a packet bigger than the first room comes (a far end
   * reflected or relayed with a longer ptime, telephone events past the frame); never again after.
   * Packets still in flight keep their old buffer: the views are dropped, not reused.
   */
  #makeRoom(payloadBytes: number): void {
    // At the most already (a payload beyond it is cut or refused where it is made): never again.
    if (payloadBytes <= this.#room || this.#room >= MAX_PAYLOAD_BYTES) return;
    this.#room = MAX_PAYLOAD_BYTES;
    this.#ring = RtpSender.#slots(MAX_PAYLOAD_BYTES);
  }

  /** The sequence number of the next packet. */
  get nextSequence(): number {
    return this.#sequence;
  }

  /** The RTP timestamp of the last packet (or the first to come). */
  get timestamp(): number {
    return this.#timestamp;
  }

  /**
   * Advances the timestamp to media clock tick `tick`: ticks that passed without a packet advance
   * it as much as the audio they did not carry. Returns whether the stream resumed after a gap (or
   * starts), which is when the marker bit is set.
   */
  #advance(tick: number): boolean {
    const last = this.#lastTick;
    this.#lastTick = tick;
    if (last === undefined) return true;
    const gap = tick - last - 1;
    this.#timestamp = (this.#timestamp + this.#frameUnits * (1 + Math.max(0, gap))) >>> 0;
    return gap > 0;
  }

  #next(): Buffer {
    const packet = this.#ring[this.#slot];
    this.#slot = (this.#slot + 1) % RING_SIZE;
    this.packet = packet;
    return packet;
  }

  #finish(payloadBytes: number): number {
    this.#sequence = (this.#sequence + 1) % RTP_SEQ_MOD;
    this.packets += 1;
    this.octets += payloadBytes;
    return RTP_HEADER_BYTES + payloadBytes;
  }

  /**
   * A packet carrying `source[start, end)` as its payload unchanged, at RTP timestamp `timestamp`
   * (Echo()'s reflection of the far end's own packets); returns its length. Audio packets after it
   * go on from that timestamp.
   */
  copy(source: Buffer, start: number, end: number, timestamp: number, marker: boolean, tick: number): number {
    const bytes = Math.min(end - start, MAX_PAYLOAD_BYTES);
    this.#makeRoom(bytes);
    this.#timestamp = timestamp >>> 0;
    this.#lastTick = tick;
    const packet = this.#next();
    writeRtpHeader(packet, marker, this.#coder.payloadType, this.#sequence, this.#timestamp, this.ssrc);
    source.copy(packet, RTP_HEADER_BYTES, start, start + bytes);
    return this.#finish(bytes);
  }

  /** Builds the audio packet of media clock tick `tick` into `packet`; returns its length. */
  audio(samples: Int16Array, tick: number): number {
    // A sample codec's payload is known before coding (a longer frame than 20 ms takes more room).
    this.#makeRoom(this.#coder.bytesFor(samples.length));
    const marker = this.#advance(tick);
    const packet = this.#next();
    writeRtpHeader(packet, marker, this.#coder.payloadType, this.#sequence, this.#timestamp, this.ssrc);
    return this.#finish(this.#coder.encode(samples, packet, RTP_HEADER_BYTES));
  }

  /**
   * Builds a packet of another payload type on tick `tick` (RFC 4733 events: their own
   * timestamp, the event's start) into `packet`; `write` fills the payload at the offset given
   * and returns its length. Returns the packet's length.
   */
  other(payloadType: number, marker: boolean, timestamp: number | undefined, tick: number, write: (dst: Buffer, offset: number) => number): number {
    this.#advance(tick);
    const packet = this.#next();
    const length = write(packet, RTP_HEADER_BYTES);
    writeRtpHeader(packet, marker, payloadType, this.#sequence, timestamp ?? this.#timestamp, this.ssrc);
    return this.#finish(length);
  }
}
