// The memory a media worker shares with the main thread for one stream: the ring of received
// frames (worker → main), the ring of frames to send (main → worker) and the stream's figures
// (its RTP statistics, jitter buffer and strict-RTP counts), which the worker rewrites every tick
// so that the main thread reads them at once, without asking. One SharedArrayBuffer per stream,
// made when the stream opens. The received ring's slots hold the largest frame the call may
// receive (its codecs' highest rate: 160 samples for a G.711-only call, 960 with Opus); the ring
// of frames to send keeps 48 kHz slots, since the main thread writes frames of any rate (a bridge,
// a prompt) and the worker converts them.
import { FrameRing, MAX_FRAME_SAMPLES } from './frame-ring.ts';
import { DEFAULT_MAX_CATCH_UP_TICKS } from '../clock.ts';
import { samplesPerFrame } from '../frame.ts';
import { RTP_STATISTICS_FIELDS } from '../rtp/statistics.ts';

/**
 * Frames to send waiting for the worker's next tick (it takes them all at each). After a stall the
 * main thread's clock runs up to DEFAULT_MAX_CATCH_UP_TICKS ticks back to back, each writing a frame
 * before the worker can take any: the ring holds a whole burst and a few worker ticks more, so the
 * frames go out late rather than never, as a stalled Asterisk thread's would. (It held 4: a burst
 * cut a tone's cadence by up to 6 packets on a loaded machine.) A power of two (frame-ring.ts).
 */
export const TO_SEND_SLOTS = 2 ** Math.ceil(Math.log2(DEFAULT_MAX_CATCH_UP_TICKS + 4));
/**
 * Received frames the main thread may fall behind by before the worker drops (320 ms). A stall of
 * the main thread leaves the worker's frames waiting until the clock's catch-up burst (up to
 * DEFAULT_MAX_CATCH_UP_TICKS ticks back to back) takes them one a tick: the ring holds a whole
 * burst and a few ticks more, as the ring to send does. (It held 8: with the backlog cut at every
 * tick, a 190 ms stall lost 3 to 8 of its ≈ 10 frames; test/interop/worker-receive-stall.measure.ts.)
 */
export const RECEIVED_SLOTS = TO_SEND_SLOTS;

/** Where each figure is in `figures`. */
export const FIGURE = {
  /** RTP_STATISTICS_FIELDS.length numbers from here (statistics.ts). */
  statistics: 0,
  /** 1 once the stream has statistics (it was configured). */
  hasStatistics: RTP_STATISTICS_FIELDS.length,
  /** 1 when the stream has a jitter buffer. */
  jitterBuffer: RTP_STATISTICS_FIELDS.length + 1,
  late: RTP_STATISTICS_FIELDS.length + 2,
  concealed: RTP_STATISTICS_FIELDS.length + 3,
  targetDelayMs: RTP_STATISTICS_FIELDS.length + 4,
  strangerPackets: RTP_STATISTICS_FIELDS.length + 5,
  strangerReports: RTP_STATISTICS_FIELDS.length + 6,
  srtpRefusedPackets: RTP_STATISTICS_FIELDS.length + 7,
} as const;
const FIGURE_COUNT = RTP_STATISTICS_FIELDS.length + 8;

export class StreamMemory {
  readonly buffer: SharedArrayBuffer;
  readonly received: FrameRing;
  readonly toSend: FrameRing;
  readonly figures: Float64Array;

  /** Bytes of a stream's memory whose received frames are `receivedSamples` long at most. */
  static bytes(receivedSamples = MAX_FRAME_SAMPLES): number {
    return FrameRing.bytes(RECEIVED_SLOTS, receivedSamples) + FrameRing.bytes(TO_SEND_SLOTS) + FIGURE_COUNT * 8;
  }

  /** A new, zeroed memory (the main thread makes it and hands it to the worker). */
  static create(receivedSamples = MAX_FRAME_SAMPLES): StreamMemory {
    return new StreamMemory(new SharedArrayBuffer(StreamMemory.bytes(receivedSamples)), receivedSamples);
  }

  constructor(buffer: SharedArrayBuffer, receivedSamples = MAX_FRAME_SAMPLES) {
    if (!isReceivedFrameLength(receivedSamples)) throw new RangeError(`received frames of ${receivedSamples} samples are no engine frame's`);
    if (buffer.byteLength !== StreamMemory.bytes(receivedSamples)) throw new RangeError('stream memory of the wrong size');
    this.buffer = buffer;
    this.received = new FrameRing(buffer, 0, RECEIVED_SLOTS, receivedSamples);
    const toSendAt = FrameRing.bytes(RECEIVED_SLOTS, receivedSamples);
    this.toSend = new FrameRing(buffer, toSendAt, TO_SEND_SLOTS);
    this.figures = new Float64Array(buffer, toSendAt + FrameRing.bytes(TO_SEND_SLOTS), FIGURE_COUNT);
  }
}

/** A 20 ms frame's length at one of the engine's rates (what the received ring may be sized for). */
export function isReceivedFrameLength(samples: unknown): samples is number {
  return samples === samplesPerFrame(8000) || samples === samplesPerFrame(16000) || samples === samplesPerFrame(24000) || samples === samplesPerFrame(48000);
}
