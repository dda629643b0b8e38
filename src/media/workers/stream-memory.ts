// The memory a media worker shares with the main thread for one stream: the ring of received
// frames (worker → main), the ring of frames to send (main → worker) and the stream's figures
// (its RTP statistics, jitter buffer and strict-RTP counts), which the worker rewrites every tick
// so that the main thread reads them at once, without asking. One SharedArrayBuffer per stream,
// made when the stream opens.
import { FrameRing } from './frame-ring.ts';
import { RTP_STATISTICS_FIELDS } from '../rtp/statistics.ts';

/** Received frames the main thread may fall behind by before the worker drops (160 ms). */
export const RECEIVED_SLOTS = 8;
/** Frames to send waiting for the worker's next tick (it takes them all at each). */
export const TO_SEND_SLOTS = 4;

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

  static bytes(): number {
    return FrameRing.bytes(RECEIVED_SLOTS) + FrameRing.bytes(TO_SEND_SLOTS) + FIGURE_COUNT * 8;
  }

  /** A new, zeroed memory (the main thread makes it and hands it to the worker). */
  static create(): StreamMemory {
    return new StreamMemory(new SharedArrayBuffer(StreamMemory.bytes()));
  }

  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength !== StreamMemory.bytes()) throw new RangeError('stream memory of the wrong size');
    this.buffer = buffer;
    this.received = new FrameRing(buffer, 0, RECEIVED_SLOTS);
    const toSendAt = FrameRing.bytes(RECEIVED_SLOTS);
    this.toSend = new FrameRing(buffer, toSendAt, TO_SEND_SLOTS);
    this.figures = new Float64Array(buffer, toSendAt + FrameRing.bytes(TO_SEND_SLOTS), FIGURE_COUNT);
  }
}
