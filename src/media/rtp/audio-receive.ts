// The receiving half every RTP audio stream shares (a SIP call's, an external media channel's):
// where decoded audio waits for the media clock, and decoding one packet's payload into it. The
// decode goes into the path's own scratch buffer: nothing is allocated per packet. A payload of
// another rate than the path's (the far end switching from G.722 to G.711 among the codecs the
// answer listed) is brought to the path's rate by the coder's own resampler.
import type { Frame, SampleRate } from '../frame.ts';
import type { RtpHeader } from './packet.ts';
import type { RtpPayloadCoder } from './payload.ts';
import { ReceiveQueue } from './receive-queue.ts';

/** What the received audio goes through before the channel hears it (the jitter buffer is one). */
export interface ReceivePath {
  /** The rate of the frames it delivers (and of the samples pushed). */
  readonly rate: SampleRate;
  scratch(count: number): Int16Array;
  push(samples: Int16Array, count: number, timestamp: number, ssrc: number, arrivalMs: number): void;
  next(nowMs: number): Frame | undefined;
  /** Forgets what waits: the next packet starts afresh (after audio nobody heard was skipped). */
  reset(): void;
}

/** Audio played as it arrives (no jitter buffer): the receive queue, which ignores timestamps. */
export class PlainReceivePath implements ReceivePath {
  constructor(private readonly queue: ReceiveQueue = new ReceiveQueue(8000)) {}

  get rate(): SampleRate {
    return this.queue.rate;
  }

  scratch(count: number): Int16Array {
    return this.queue.scratch(count);
  }

  push(samples: Int16Array, count: number): void {
    this.queue.pushFrom(samples, count);
  }

  next(): Frame | undefined {
    return this.queue.next();
  }

  reset(): void {
    this.queue.clear();
  }
}

/** Decodes the audio payload of the packet `header` describes into `path` (an empty payload is skipped). */
export function receiveRtpAudio(coder: RtpPayloadCoder, message: Buffer, header: RtpHeader, path: ReceivePath, arrivalMs: number): void {
  const room = coder.samplesIn(header.payloadStart, header.payloadEnd);
  if (room === 0) return;
  const decoded = path.scratch(room);
  const count = coder.decode(message, header.payloadStart, header.payloadEnd, decoded);
  if (count === 0) return;
  const timestamp = coder.sampleTimestamp(header.timestamp, path.rate);
  if (coder.rate === path.rate) {
    path.push(decoded, count, timestamp, header.ssrc, arrivalMs);
    return;
  }
  const converted = coder.toRate(decoded, count, path.rate);
  path.push(converted, coder.convertedCount, timestamp, header.ssrc, arrivalMs);
}
