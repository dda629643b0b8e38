// Per-frame cost of media over WebSocket (chan_websocket) outside the socket: a µ-law message from
// the application queued, played out and decoded (one per tick), and a frame of the call encoded
// for the application; plus the heap growth over a million frames once the queue has grown (it
// should stay near zero: the paths allocate nothing per frame). Run: npx tsx bench/websocket-media.ts
import { getCodec } from '../src/media/codecs.ts';
import { MediaQueue } from '../src/channels/websocket/media-queue.ts';

const ulaw = getCodec('ulaw')!;
const FRAME_BYTES = ulaw.bytesPerFrame;
const queue = new MediaQueue(FRAME_BYTES, 0xff, 65527);
const message = Buffer.alloc(FRAME_BYTES * 5, 0x55);
const samples = new Int16Array(FRAME_BYTES);
const outgoing = Buffer.alloc(FRAME_BYTES);

/** One 100 ms message in, five ticks out. */
function inAndOut(): void {
  queue.pushMessage(message, false);
  for (let i = 0; i < 5; i++) ulaw.decode(queue.shift()!, samples);
}

function toApplication(): void {
  ulaw.encode(samples, outgoing);
}

function nsPer(work: () => void, iterations: number, framesPerCall: number): number {
  for (let i = 0; i < iterations / 10; i++) work();
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) work();
  return Number(process.hrtime.bigint() - started) / iterations / framesPerCall;
}

function report(label: string, ns: number): void {
  console.log(`${label.padEnd(52)} ${ns.toFixed(0).padStart(6)} ns/frame  (${((ns / 20e6) * 100).toFixed(4)}% of a 20 ms tick)`);
}

report('application → call: queue, play out, decode (µ-law)', nsPer(inAndOut, 200_000, 5));
report('call → application: encode (µ-law)', nsPer(toApplication, 1_000_000, 1));

const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < 200_000; i++) inAndOut();
const grown = process.memoryUsage().heapUsed - before;
console.log(`heap growth over 1,000,000 frames queued and played: ${(grown / 1024).toFixed(0)} KiB${gc ? '' : ' (run with node --expose-gc --import tsx for a settled figure)'}`);
