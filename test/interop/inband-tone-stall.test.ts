// A stall of the main thread in the middle of an in-band tone loses none of it. The media clock
// runs the ticks a stall held up back to back once it ends (up to its catch-up burst of 10), so the
// tone generator writes those frames at once; the SIP call's media worker must send every one of
// them, late, as Asterisk sends a stalled generator's frames late rather than never. (The ring
// that carries frames to the worker held 4: a burst of 9 lost 5 of them, and a raw phone counting
// Busy()'s cadence found a pause 5 or 6 packets short on a loaded machine.) The server runs in this
// process, so blocking this thread stalls its main thread while the media workers go on; the raw
// phone's socket keeps what arrives meanwhile.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { ulawDecode } from '../../src/media/g711.ts';
import { blockThread } from '../helpers/block-thread.ts';
import type { TestServer } from '../helpers/server.ts';
import { startOneWorkerServer } from './one-worker-server.ts';
import { RawPhone, type ReceivedRtp } from './raw-phone.ts';

const FRAME = 160;
const LOUD_RMS = 1000;
/** Shorter than the clock's catch-up burst (10 ticks): every tick it held up is run, none dropped. */
const STALL_MS = 170;
const STALLS = 4;

let work: string;
let server: TestServer;
const phone = new RawPhone('alice');

before(async () => {
  ({ work, server } = await startOneWorkerServer('tone-stall', ['exten => 611,1,Answer()', ' same => n,Busy()'], phone));
});

after(async () => {
  phone.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

const pcmu = (since: number): ReceivedRtp[] => phone.received.filter((packet) => packet.at >= since && packet.payloadType === 0 && packet.payload.length === FRAME);

function loud(packet: ReceivedRtp): boolean {
  const samples = new Int16Array(FRAME);
  ulawDecode(packet.payload, samples);
  return Math.sqrt(meanSquare(samples)) > LOUD_RMS;
}

/** Waits (bounded, by polling what arrived) until `count` packets came since `since`. */
async function packets(since: number, count: number, timeoutMs = 45_000): Promise<ReceivedRtp[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = pcmu(since);
    if (got.length >= count) return got;
    assert.ok(Date.now() < deadline, `after ${timeoutMs} ms: ${got.length} packets, wanted ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test(`Busy() through ${STALLS} stalls of the main thread of ${STALL_MS} ms: every packet of the tone is sent, the cadence holds`, { timeout: 120_000 }, async () => {
  const from = Date.now();
  const { dialog, final } = await phone.call('611');
  assert.match(final, /^SIP\/2\.0 200/);
  try {
    let got = await packets(from, 1);
    assert.equal(server.core.pjsip.mediaWorkers?.streams, 1, 'the call\'s stream runs in the media worker');
    while (!got.some(loud)) got = await packets(from, got.length + 1);
    // Stalls at different points of the cadence, a dozen packets apart.
    for (let stall = 0; stall < STALLS; stall++) {
      got = await packets(from, got.length + 12);
      blockThread(STALL_MS);
    }
    got = await packets(from, got.length + 60);
    // Counted by sequence number: each packet in its place, a gap shown as such (none is expected on loopback).
    const first = got.findIndex(loud);
    const tone = got.slice(first).sort((a, b) => ((a.sequence - b.sequence) << 16) >> 16);
    for (let i = 1; i < tone.length; i++) {
      const step = (tone[i]!.sequence - tone[i - 1]!.sequence) & 0xffff;
      assert.equal(step, 1, `packet ${i}: sequence ${tone[i - 1]!.sequence} then ${tone[i]!.sequence}`);
      // A frame sent late after a stall is stamped after the gap the worker's own ticks saw (marked), then one frame each.
      const advance = (tone[i]!.timestamp - tone[i - 1]!.timestamp) >>> 0;
      assert.ok(advance >= FRAME && advance % FRAME === 0 && advance < 8000 * 10, `packet ${i}: the timestamp goes on by whole frames, got ${advance}`);
    }
    // The worker dropped none of the frames the main thread wrote (its rings' count on /metrics, as of its last load report).
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` } })).text();
    assert.match(metrics, /^patchbay_media_worker_ring_drops\{worker="0"\} 0$/m);
    const runs = countRuns(tone.map(loud));
    // Every whole run (not the last, cut off) is 0.5 s: 25 packets, one either way where a part ends mid-packet.
    const whole = runs.slice(0, -1);
    assert.ok(whole.length >= 4, `the tone went on through the stalls (runs ${runs.join(', ')})`);
    for (const [index, length] of whole.entries()) assert.ok(Math.abs(length - 25) <= 1, `run ${index} is 25 packets, got ${length} (runs ${runs.join(', ')})`);
  } finally {
    assert.match(await phone.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
  }
});

/** The lengths of the alternating runs of true and false, starting with the first value's. */
function countRuns(values: readonly boolean[]): number[] {
  const lengths: number[] = [];
  let previous: boolean | undefined;
  for (const value of values) {
    if (value === previous) lengths[lengths.length - 1]!++;
    else lengths.push(1);
    previous = value;
  }
  return lengths;
}
