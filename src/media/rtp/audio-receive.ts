// The receiving half every RTP audio stream shares (a SIP call's, an external media channel's):
// where decoded audio waits for the media clock, and decoding one packet's payload into it. The
// decode goes into the path's own scratch buffer: nothing is allocated per packet.
import type { Frame } from '../frame.ts';
import type { RtpHeader } from './packet.ts';
import type { RtpPayloadCoder } from './payload.ts';
import { ReceiveQueue } from './receive-queue.ts';

/** What the received audio goes through before the channel hears it (the jitter buffer is one). */
export interface ReceivePath {
  scratch(count: number): Int16Array;
  push(samples: Int16Array, count: number, timestamp: number, ssrc: number, arrivalMs: number): void;
  next(nowMs: number): Frame | undefined;
}

/** Audio played as it arrives (no jitter buffer): the receive queue, which ignores timestamps. */
export class PlainReceivePath implements ReceivePath {
  constructor(private readonly queue: ReceiveQueue = new ReceiveQueue(8000)) {}

  scratch(count: number): Int16Array {
    return this.queue.scratch(count);
  }

  push(samples: Int16Array, count: number): void {
    this.queue.pushFrom(samples, count);
  }

  next(): Frame | undefined {
    return this.queue.next();
  }
}

/** Decodes the audio payload of the packet `header` describes into `path` (an empty payload is skipped). */
export function receiveRtpAudio(coder: RtpPayloadCoder, message: Buffer, header: RtpHeader, path: ReceivePath, arrivalMs: number): void {
  const count = coder.samplesIn(header.payloadStart, header.payloadEnd);
  if (count === 0) return;
  const samples = path.scratch(count);
  coder.decode(message, header.payloadStart, header.payloadEnd, samples);
  path.push(samples, count, header.timestamp, header.ssrc, arrivalMs);
}
