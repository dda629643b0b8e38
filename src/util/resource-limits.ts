// The automatic channel limit (`max_channels: 0`). Unlimited channels let one looping dialplan or a
// flood of originates spend every descriptor (then ARI, recordings and SIP fail with EMFILE) or the
// heap (then the process dies with every call). A channel may hold a few descriptors (RTP and RTCP
// sockets, a recording, a media WebSocket) and some heap (media buffers, variables, event history).
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';

/** Descriptors kept for listeners, log files, ARI clients and the runtime itself. */
const RESERVED_DESCRIPTORS = 256;
const DESCRIPTORS_PER_CHANNEL = 4;
const HEAP_BYTES_PER_CHANNEL = 512 * 1024;
const FLOOR = 64;
const CEILING = 100_000;

/** The soft open-file limit of this process, or undefined where it cannot be read (not Linux). */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const line = /^Max open files\s+(\d+|unlimited)/m.exec(text);
  if (!line) return undefined;
  return line[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line[1]);
}

/**
 * The channel limit when none is configured: the smaller of what the open-file limit and the
 * heap leave room for, never below 64 (a server must take calls) nor above 100,000.
 */
export function automaticChannelLimit(
  descriptors: number | undefined = openFileLimit(),
  heapBytes: number = Math.min(v8.getHeapStatistics().heap_size_limit, os.totalmem()),
): number {
  const byDescriptors = Math.floor(((descriptors ?? 1024) - RESERVED_DESCRIPTORS) / DESCRIPTORS_PER_CHANNEL);
  const byHeap = Math.floor(heapBytes / HEAP_BYTES_PER_CHANNEL);
  return Math.max(FLOOR, Math.min(CEILING, byDescriptors, byHeap));
}
