// A bridge mixed inside the media workers (worker-mix.ts through the pool): three streams of one
// worker, each far end sending its own tone, each hears the other two and not itself, and no frame
// reaches the main thread; a fourth stream on the other worker joins through shared rings and hears
// all three (and they it); the worker holding the fourth dies and the three keep mixing; stop()
// gives the frames back to the main thread. The far ends are the test's sockets (RtpToneEnd). With
// a G.722 member the bridge mixes at 16 kHz: the µ-law members hear its tone, it hears theirs, each
// stream encoding what it hears in its own codec.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { createCoder } from '../../../src/media/stream-coder.ts';
import { describe, test } from 'node:test';
import type { MediaWorkerPool, OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteRtpStream, RemoteStreamEvents } from '../../../src/media/workers/remote-stream.ts';
import { RtpToneEnd } from '../../helpers/rtp-tone.ts';
import { eachHearsTheRest, hearsOthers } from '../../helpers/mix-hearing.ts';
import { tonePower } from '../../helpers/tone-power.ts';
import { openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(36_000, 4_000);
const TONES = [600, 1000, 1400, 1800];

interface Counted extends RemoteStreamEvents {
  frames: number;
  lost: string | undefined;
}

function events(): Counted {
  const counted: Counted = {
    frames: 0,
    lost: undefined,
    onFrame: () => void (counted.frames += 1),
    onDigit: () => undefined,
    onLost: (reason) => void (counted.lost = reason),
  };
  return counted;
}

function request(e: RemoteStreamEvents, nearWorker?: number): OpenRequest {
  return { host: '127.0.0.1', portStart: PORT_BASE, portEnd: PORT_BASE + 2_000, options: { jitterBuffer: { minDelayMs: 40, maxDelayMs: 200 } }, events: e, ...(nearWorker === undefined ? {} : { nearWorker }) };
}

interface Party {
  readonly stream: RemoteRtpStream;
  readonly end: RtpToneEnd;
  readonly events: Counted;
  readonly hz: number;
}

async function party(pool: MediaWorkerPool, hz: number, nearWorker?: number): Promise<Party> {
  const e = events();
  const stream = await openWhenReady(pool, request(e, nearWorker));
  const end = await new RtpToneEnd().open();
  stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: end.port, direction: 'sendrecv' });
  end.startTone(hz, stream.localPort);
  return { stream, end, events: e, hz };
}

async function everyoneHearsTheRest(parties: readonly Party[], what: string): Promise<void> {
  await waitFor(() => eachHearsTheRest(parties), what);
}

/** A far end speaking G.722 (payload type 9): sends a 16 kHz tone, keeps what it hears decoded at 16 kHz. */
class G722ToneEnd {
  readonly socket = dgram.createSocket('udp4');
  readonly heard: Array<{ at: number; samples: Int16Array }> = [];
  readonly #coder = createCoder('g722')!;
  readonly #decoder = createCoder('g722')!;
  #timer: NodeJS.Timeout | undefined;

  async open(): Promise<this> {
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    this.socket.on('message', (packet) => {
      if (packet.length <= 12 || (packet[1] & 0x7f) !== 9) return;
      const samples = new Int16Array(640);
      const count = this.#decoder.decoder.decode(packet, 12, packet.length, samples);
      this.heard.push({ at: Date.now(), samples: samples.subarray(0, count) });
    });
    return this;
  }

  get port(): number {
    return this.socket.address().port;
  }

  startTone(hz: number, port: number): void {
    let sequence = 0;
    let phase = 0;
    const started = performance.now();
    const samples = new Int16Array(320);
    const payload = new Uint8Array(160);
    const sendDue = (): void => {
      while (sequence < Math.floor((performance.now() - started) / 20) + 1) {
        for (let i = 0; i < 320; i++) samples[i] = Math.round(8000 * Math.sin((phase += (2 * Math.PI * hz) / 16000)));
        const length = this.#coder.encoder.encode(samples, 320, payload, 0);
        const packet = Buffer.alloc(12 + length);
        packet[0] = 0x80;
        packet[1] = 9;
        packet.writeUInt16BE(sequence & 0xffff, 2);
        packet.writeUInt32BE((sequence * 160) >>> 0, 4);
        packet.writeUInt32BE(0x722, 8);
        packet.set(payload.subarray(0, length), 12);
        this.socket.send(packet, port, '127.0.0.1');
        sequence++;
      }
    };
    this.#timer = setInterval(sendDue, 10);
  }

  /** What it heard over the last second, at 16 kHz. */
  lastSecond(): Int16Array {
    const since = Date.now() - 1000;
    const chunks = this.heard.filter((chunk) => chunk.at >= since);
    const out = new Int16Array(chunks.reduce((sum, chunk) => sum + chunk.samples.length, 0));
    let offset = 0;
    for (const chunk of chunks) {
      out.set(chunk.samples, offset);
      offset += chunk.samples.length;
    }
    return out;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.socket.close();
  }
}

describe('a bridge mixed in the media workers', () => {
  const workers = useWorkerPool(2);

  test('three streams of one worker each hear the other two, not themselves; a fourth of another worker joins through shared memory; its worker dies and the three go on', { timeout: 120_000 }, async () => {
    const a = await party(workers.pool, TONES[0]);
    const b = await party(workers.pool, TONES[1], a.stream.workerIndex);
    const c = await party(workers.pool, TONES[2], a.stream.workerIndex);
    const parties = [a, b, c];
    try {
      assert.equal(b.stream.workerIndex, a.stream.workerIndex);
      assert.equal(c.stream.workerIndex, a.stream.workerIndex);
      const mixer = a.stream.workerIndex;
      const three = a.stream.mixWith(parties.map((p) => p.stream), 8000);
      assert.ok(three, 'three free streams of one pool can be mixed');
      assert.equal(a.stream.mixWith(parties.map((p) => p.stream), 8000), undefined, 'a stream already mixed cannot be mixed again');
      assert.equal(a.stream.relayTo(b.stream), false, 'nor relayed');
      await everyoneHearsTheRest(parties, 'the three mixed in one worker');
      const framesBefore = parties.map((p) => p.events.frames);
      await waitFor(() => workers.pool.loads()[mixer].mixedStreams === 3 && workers.pool.loads()[mixer].mixes === 1, 'the load report: 3 mixed streams, 1 mix');
      assert.deepEqual(parties.map((p) => p.events.frames), framesBefore, 'no frame crossed to the main thread while mixed');

      // A fourth on the other worker: the mix is made again for four; the first worker mixes (it holds three).
      const d = await party(workers.pool, TONES[3]);
      parties.push(d);
      assert.notEqual(d.stream.workerIndex, mixer, 'placed on the less loaded worker');
      three.stop();
      const four = a.stream.mixWith(parties.map((p) => p.stream), 8000);
      assert.ok(four);
      await everyoneHearsTheRest(parties, 'four mixed, one across workers');
      await waitFor(() => workers.pool.loads()[mixer].mixedStreams === 3 && workers.pool.loads()[mixer].mixes === 1 && workers.pool.loads()[d.stream.workerIndex].mixedStreams === 1, 'the load reports of both workers');

      // The fourth's worker dies: it is lost; the other three keep hearing each other.
      await workers.pool.kill(d.stream.workerIndex);
      await waitFor(() => d.events.lost !== undefined, 'the fourth stream lost');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await everyoneHearsTheRest([a, b, c], 'the three after the other worker died');

      // The mix ends: frames reach the main thread again.
      four.stop();
      const counted = [a, b, c].map((p) => p.events.frames);
      await waitFor(() => [a, b, c].every((p, i) => p.events.frames >= counted[i] + 10), 'frames on the main thread after the mix');
      assert.ok(a.stream.free, 'the stream is free again');
    } finally {
      for (const p of parties) {
        p.stream.close();
        p.end.close();
      }
    }
    await waitFor(() => workers.pool.loads().every((load) => load.running), 'the restarted worker', 60_000);
  });

  test('a G.722 member: mixed at 16 kHz, each stream encoding what it hears in its own codec', { timeout: 120_000 }, async () => {
    const a = await party(workers.pool, TONES[0]);
    const b = await party(workers.pool, TONES[1], a.stream.workerIndex);
    const wide = await new G722ToneEnd().open();
    const c = await openWhenReady(workers.pool, request(events(), a.stream.workerIndex));
    try {
      c.configure({ codec: 'g722', payloadType: 9, remoteAddress: '127.0.0.1', remotePort: wide.port, direction: 'sendrecv' });
      wide.startTone(TONES[3], c.localPort);
      const mix = a.stream.mixWith([a.stream, b.stream, c], 16000);
      assert.ok(mix);
      const wideTone = { hz: TONES[3] };
      await waitFor(() => hearsOthers(a, [b, wideTone]) && hearsOthers(b, [a, wideTone]), 'the µ-law members hear each other and the G.722 member');
      await waitFor(() => {
        const heard = wide.lastSecond();
        if (heard.length < 30 * 320) return false;
        const own = tonePower(heard, TONES[3], 16000);
        return [a, b].every((p) => {
          const power = tonePower(heard, p.hz, 16000);
          return power > 1e6 && power > 20 * own;
        });
      }, 'the G.722 member hears both, decoded at 16 kHz');
      mix.stop();
    } finally {
      for (const p of [a, b]) {
        p.stream.close();
        p.end.close();
      }
      c.close();
      wide.close();
    }
  });

  test('streams that cannot be mixed: a closed one, or one twice', async () => {
    const a = await party(workers.pool, TONES[0]);
    const b = await party(workers.pool, TONES[1], a.stream.workerIndex);
    try {
      assert.equal(a.stream.mixWith([a.stream, a.stream, b.stream], 8000), undefined, 'the same stream twice');
      b.stream.close();
      assert.equal(a.stream.mixWith([a.stream, b.stream], 8000), undefined, 'a closed stream');
      assert.ok(a.stream.free, 'refusals leave the stream free');
    } finally {
      a.stream.close();
      b.stream.close();
      a.end.close();
      b.end.close();
    }
  });
});
