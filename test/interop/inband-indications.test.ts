// Indications on an answered SIP call, heard in band as Asterisk 22's core makes them: chan_pjsip
// cannot send a 180, 486 or 503 once the call is Up, so Ringing(), Busy(), Congestion() and ARI's
// ring play the tone of the channel's tone zone (CHANNEL(tonezone), the endpoint's tone_zone) as RTP instead; ring_stop ends it, Progress() plays
// nothing and leaves it playing, the first frame Echo() writes ends it. A raw phone (raw-phone.ts) calls and its received PCMU is
// analysed: the tone's frequencies (Goertzel in 10 Hz bins over the tone's runs) and its cadence in
// 20 ms packets, which the media clock makes one after the other (a stalled tick makes none, and
// the ticks of a catch-up burst all reach the media worker, so the cadence counted in packets holds
// on a loaded machine: inband-tone-stall.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { ulawDecode, ulawEncode } from '../../src/media/g711.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { PacedRtpSender } from './paced-rtp-sender.ts';
import { RawPhone, type PhoneDialog } from './raw-phone.ts';

const FRAME = 160;
/** A packet this loud (RMS) carries tone; the tones play at about 5000 per frequency, silence is 0. */
const LOUD_RMS = 1000;

let work: string;
let server: TestServer;
let events: EventSocket;
const alice = new RawPhone('alice');
/** A phone of an endpoint with tone_zone=uk. */
const bob = new RawPhone('bob');

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'patchbay-inband-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(
    dialplanFile,
    [
      '[phones]',
      // Progress() on an answered call plays nothing and leaves the ringing playing.
      'exten => 610,1,Answer()',
      ' same => n,Ringing()',
      ' same => n,Progress()',
      ' same => n,Wait(60)',
      'exten => 611,1,Answer()',
      ' same => n,Busy()',
      'exten => 612,1,Answer()',
      ' same => n,Congestion()',
      'exten => 613,1,Answer()',
      ' same => n,Set(CHANNEL(tonezone)=de)',
      ' same => n,Ringing()',
      ' same => n,Wait(60)',
      'exten => 614,1,Answer()',
      ' same => n,Ringing()',
      ' same => n,Wait(60)',
      // Echo() writes what it hears: its first frame ends the tone (interruptible, as Asterisk's).
      'exten => 615,1,Answer()',
      ' same => n,Ringing()',
      ' same => n,Echo()',
      'exten => 620,1,Answer()',
      ' same => n,Stasis(ringer)',
      '',
    ].join('\n'),
  );
  await alice.open();
  await bob.open();
  server = await startTestServer({
    config_objects: { res_pjsip: { endpoint: { alice: { context: 'phones', allow: 'ulaw' }, bob: { context: 'phones', allow: 'ulaw', tone_zone: 'uk' } } } },
    dialplan: { file: dialplanFile },
  } as never);
  alice.serverPort = server.core.pjsip.port;
  bob.serverPort = server.core.pjsip.port;
  events = await server.events('app=ringer');
});

after(async () => {
  alice.close();
  bob.close();
  await events?.close();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The 20 ms PCMU packets `phone` received on this call so far, decoded, in arrival order. */
function framesSince(from: number, phone: RawPhone): Int16Array[] {
  return phone.received
    .filter((packet) => packet.at >= from && packet.payloadType === 0 && packet.payload.length === FRAME)
    .map((packet) => {
      const samples = new Int16Array(FRAME);
      ulawDecode(packet.payload, samples);
      return samples;
    });
}

const loud = (frame: Int16Array): boolean => Math.sqrt(meanSquare(frame)) > LOUD_RMS;

/** Waits (bounded) until `count` packets followed the first loud one; returns them from there. */
async function toneFrames(from: number, count: number, phone = alice, timeoutMs = 45_000): Promise<Int16Array[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frames = framesSince(from, phone);
    const first = frames.findIndex(loud);
    if (first >= 0 && frames.length - first >= count) return frames.slice(first, first + count);
    if (Date.now() > deadline) assert.fail(`after ${timeoutMs} ms: ${frames.length} packets, first loud at ${first}; wanted ${count} from there`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The lengths of the alternating loud and quiet runs, starting with a loud one. */
function runs(frames: readonly Int16Array[]): number[] {
  const lengths: number[] = [];
  let current = true;
  let length = 0;
  for (const frame of frames) {
    if (loud(frame) === current) length++;
    else {
      lengths.push(length);
      current = !current;
      length = 1;
    }
  }
  lengths.push(length);
  return lengths;
}

/** The loud packets' samples joined: one stretch of tone to measure frequencies over. */
function loudAudio(frames: readonly Int16Array[]): Int16Array {
  const chosen = frames.filter(loud);
  const out = new Int16Array(chosen.length * FRAME);
  chosen.forEach((frame, index) => out.set(frame, index * FRAME));
  return out;
}

/** Asserts the tone holds each of `present` (strong) and none of `absent` (a hundredth of the power at most). */
function assertFrequencies(audio: Int16Array, present: readonly number[], absent: readonly number[]): void {
  const weakest = Math.min(...present.map((frequency) => tonePower(audio, frequency, 8000)));
  const powers = Object.fromEntries([...present, ...absent].map((frequency) => [frequency, Math.round(tonePower(audio, frequency, 8000))]));
  // 5000 peak per frequency: a power of about 5000² / 2 each; µ-law keeps it within a few percent.
  assert.ok(weakest > 5e6, `each of ${present.join('+')} Hz is strong: ${JSON.stringify(powers)}`);
  for (const frequency of absent) assert.ok(tonePower(audio, frequency, 8000) < weakest / 100, `${frequency} Hz is absent: ${JSON.stringify(powers)}`);
}

/**
 * Asserts a run is about `expected` packets long: 5 % or 2 packets either way, whichever is more
 * (a tone part need not end on a packet).
 */
function assertRun(lengths: readonly number[], index: number, expected: number, what: string): void {
  const length = lengths[index];
  const slack = Math.max(2, Math.round(expected * 0.05));
  assert.ok(length !== undefined && Math.abs(length - expected) <= slack, `${what}: ${expected} packets, got ${length} (runs ${lengths.join(', ')})`);
}

/**
 * Alice calls `extension`, which answers; `check` runs on the call, which she hangs up whatever
 * came of it (a call left up would go on sending to her one RTP port during the next test).
 */
async function onCall(extension: string, check: (from: number, dialog: PhoneDialog) => Promise<void>, phone = alice): Promise<void> {
  const from = Date.now();
  const { dialog, final } = await phone.call(extension);
  assert.match(final, /^SIP\/2\.0 200/);
  try {
    await check(from, dialog);
  } finally {
    assert.match(await phone.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
  }
}

describe('indications on an answered SIP call are heard in band (Asterisk 22 core emulation)', () => {
  test('Ringing() after Answer(): the US ring tone, 440+480 Hz, 2 s on and 4 s off; Progress() neither stops it nor sends anything', { timeout: 90_000 }, async () => {
    await onCall('610', async (from) => {
      // One on, one off and the start of the next on: 100 + 200 + 5 packets.
      const frames = await toneFrames(from, 305);
      const lengths = runs(frames);
      assertRun(lengths, 0, 100, 'the first ring');
      assertRun(lengths, 1, 200, 'the pause after it');
      assert.ok(lengths.length >= 3, `the ringing goes on after the pause (runs ${lengths.join(', ')})`);
      assertFrequencies(loudAudio(frames), [440, 480], [350, 620]);
      // Nothing was signalled: the call's only responses were the INVITE's, no 180 or 183 after the 200.
      await assert.rejects(alice.nextMessage(/^SIP\/2\.0 18\d/, 500), 'no provisional response after the answer');
    });
  });

  test('Busy() after Answer(): the busy tone, 480+620 Hz, 0.5 s on and 0.5 s off, until the phone hangs up', { timeout: 90_000 }, async () => {
    await onCall('611', async (from) => {
      const frames = await toneFrames(from, 105);
      const lengths = runs(frames);
      for (let index = 0; index < 4; index++) assertRun(lengths, index, 25, index % 2 === 0 ? 'a busy beep' : 'a busy pause');
      assertFrequencies(loudAudio(frames), [480, 620], [440, 350]);
    });
  });

  test('Congestion() after Answer(): the congestion tone, 480+620 Hz, 0.25 s on and 0.25 s off', { timeout: 90_000 }, async () => {
    await onCall('612', async (from) => {
      const frames = await toneFrames(from, 100);
      const lengths = runs(frames);
      // 250 ms is 12.5 packets: a beep is 12 or 13 packets (one shared with the pause), a beep and a pause 25.
      for (let index = 0; index + 1 < 6; index += 2) assertRun([lengths[index]! + lengths[index + 1]!], 0, 25, 'a congestion beep and its pause');
      for (let index = 0; index < 6; index++) assert.ok(lengths[index]! >= 10 && lengths[index]! <= 15, `runs of a quarter second (runs ${lengths.join(', ')})`);
      assertFrequencies(loudAudio(frames), [480, 620], [440]);
    });
  });

  test("Set(CHANNEL(tonezone)=de) then Ringing(): Germany's ring tone, 425 Hz, 1 s on and 4 s off", { timeout: 90_000 }, async () => {
    await onCall('613', async (from) => {
      const frames = await toneFrames(from, 255);
      const lengths = runs(frames);
      assertRun(lengths, 0, 50, 'the first ring');
      assertRun(lengths, 1, 200, 'the pause after it');
      assertFrequencies(loudAudio(frames), [425], [480, 620]);
    });
  });

  test("an endpoint with tone_zone=uk: Ringing() after Answer() plays the UK ring tone, 400+450 Hz, 0.4 s on, 0.2 s off, 0.4 s on, 2 s off", { timeout: 90_000 }, async () => {
    await onCall(
      '614',
      async (from) => {
        const frames = await toneFrames(from, 160, bob);
        const lengths = runs(frames);
        assertRun(lengths, 0, 20, 'the first ring');
        assertRun(lengths, 1, 10, 'the short pause');
        assertRun(lengths, 2, 20, 'the second ring');
        assertRun(lengths, 3, 100, 'the long pause');
        assertFrequencies(loudAudio(frames), [400, 450], [480, 620]);
      },
      bob,
    );
  });

  test('Ringing() then Echo(): the first frame Echo() writes back ends the ring tone, and the echo goes out alone', { timeout: 90_000 }, async () => {
    const from = Date.now();
    const { dialog, final } = await alice.call('615');
    assert.match(final, /^SIP\/2\.0 200/);
    try {
      await toneFrames(from, 10);
      // The phone speaks a 1 kHz tone; Echo() sends it back.
      const port = Number(/^m=audio (\d+)/m.exec(final)?.[1]);
      const sender = new PacedRtpSender(alice, port, 0x1234, { sequence: 1, timestamp: 0 });
      const speech = new Int16Array(FRAME);
      const payload = Buffer.alloc(FRAME);
      for (let i = 0; i < 60; i++, sender.timestamp += FRAME) {
        for (let n = 0; n < FRAME; n++) speech[n] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (i * FRAME + n)) / 8000));
        ulawEncode(speech, payload);
        await sender.send(0, payload);
      }
      const isEcho = (frame: Int16Array): boolean => goertzelPower(frame, 1000, 8000) > 10 * goertzelPower(frame, 440, 8000);
      let frames: Int16Array[] = [];
      let first = -1;
      const deadline = Date.now() + 30_000;
      while (first < 0 || frames.length - first < 40) {
        assert.ok(Date.now() < deadline, `the echo came back: ${frames.length} packets, first echoed at ${first}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        frames = framesSince(from, alice);
        first = frames.findIndex(isEcho);
      }
      assert.ok(frames.slice(0, first).some(loud), 'the ring tone played before');
      const after = frames.slice(first, first + 40);
      const audio = new Int16Array(after.length * FRAME);
      after.forEach((frame, index) => audio.set(frame, index * FRAME));
      const powers = Object.fromEntries([1000, 440, 480].map((f) => [f, Math.round(tonePower(audio, f, 8000))]));
      assert.ok(powers[440]! < powers[1000]! / 100 && powers[480]! < powers[1000]! / 100, `only the echo after its first frame, no ring tone: ${JSON.stringify(powers)}`);
    } finally {
      assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
    }
  });

  test('ARI POST /channels/{id}/ring on an answered SIP channel plays the ring tone; DELETE .../ring ends it', { timeout: 90_000 }, async () => {
    await onCall('620', async (from) => {
      const start = await events.nextMatching((event) => event.type === 'StasisStart', 15_000);
      const id = String((start.channel as { id: string }).id);
      assert.equal((await server.ari(`/channels/${id}/ring`, { method: 'POST' })).status, 204);
      const frames = await toneFrames(from, 40);
      assertFrequencies(loudAudio(frames), [440, 480], [620]);
      assert.equal((await server.ari(`/channels/${id}/ring`, { method: 'DELETE' })).status, 204);
      // Packets made before the stop may still be on their way: only those after a margin count.
      const stoppedAt = Date.now() + 500;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const late = alice.received.filter((packet) => packet.at >= stoppedAt && packet.payloadType === 0).map((packet) => {
        const samples = new Int16Array(packet.payload.length);
        ulawDecode(packet.payload, samples);
        return samples;
    });
    assert.equal(late.filter(loud).length, 0, `no tone after ring_stop (${late.length} packets after the margin)`);
    });
  });
});
