// In-band DTMF (dtmf_mode=inband) from a real peer, SIPp: before, only the raw test phone sent
// tones (media.test.ts). SIPp streams a u-law WAV of four digits (150 ms tones, 150 ms gaps, made
// with sox) and the app sees them as ChannelDtmfReceived, in order, each once. The answer offers no
// telephone-event. Skipped when sipp or sox is not installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'inband-app';
/** Each digit's row and column frequency (Hz). */
const DIGIT_TONES: Record<string, readonly [number, number]> = { '1': [697, 1209], '5': [770, 1336], '9': [852, 1477], '#': [941, 1477] };
const DIGITS = ['1', '5', '9', '#'];
let setup: SippServer;
/** Where SIPp runs: its audio.wav is the digits. */
let digitsDir: string;

/** Writes audio.wav in `dir`: 300 ms of silence, the digits (150 ms each, 150 ms apart), then 6 s of silence (SIPp loops the file). */
function writeDigits(dir: string): void {
  const parts: string[] = [];
  const silence = (name: string, seconds: number): string => {
    const file = join(dir, name);
    spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', file, 'trim', '0', String(seconds)]);
    return file;
  };
  parts.push(silence('lead.wav', 0.3));
  const gap = silence('gap.wav', 0.15);
  for (const digit of DIGITS) {
    const [row, column] = DIGIT_TONES[digit];
    const file = join(dir, `digit-${row}-${column}.wav`);
    spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', file, 'synth', '0.15', 'sine', String(row), 'sine', String(column), 'vol', '0.5']);
    parts.push(file, gap);
  }
  parts.push(silence('tail.wav', 6));
  const made = spawnSync('sox', [...parts, join(dir, 'audio.wav')], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
}

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer('sipp-inband', `[inband-in]\nexten => 100,1,Stasis(${APP})\n`, { endpoint: { tones: { context: 'inband-in', allow: 'ulaw', aors: 'tones', dtmf_mode: 'inband' } }, aor: { tones: { max_contacts: 1 } } }, APP);
  digitsDir = join(setup.work, 'digits');
  mkdirSync(digitsDir);
  writeDigits(digitsDir);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

const nextEvent = (match: (event: Json) => boolean, timeoutMs = 15_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);

describe('in-band DTMF from SIPp', { skip: !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false }, () => {
  test('the tones SIPp streams raise ChannelDtmfReceived 1, 5, 9, # in order, each once; no telephone-event in the answer', { timeout: 60_000 }, async () => {
    const run = sipp('call-hangup.xml', [setup.target(), '-s', '100', '-set', 'caller', 'tones', '-d', '4000'], { cwd: digitsDir, timeoutMs: 30_000, trace: true });
    const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/tones-'));
    const id = start.channel.id as string;
    assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    const digits: string[] = [];
    for (;;) {
      const event = await nextEvent((e) => (e.type === 'ChannelDtmfReceived' || e.type === 'ChannelDestroyed') && e.channel?.id === id, 30_000);
      if (event.type === 'ChannelDestroyed') break;
      digits.push(event.digit as string);
    }
    assert.deepEqual(digits, DIGITS, 'each digit once, in order (the 6 s of silence keep SIPp\'s loop from repeating them)');
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const [ok] = tracedMessages(result, /^SIP\/2\.0 200/);
    assert.doesNotMatch(ok ?? '', /telephone-event/, 'inband: no telephone-event answered');
  });
});
