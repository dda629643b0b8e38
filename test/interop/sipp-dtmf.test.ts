// DTMF from a real peer, SIPp: before, only our raw test phones sent it (media.test.ts,
// test-phone.ts). In-band (dtmf_mode=inband): SIPp streams a u-law WAV of four digits (150 ms tones,
// 150 ms gaps, made with sox); the answer offers no telephone-event. RFC 4733 (the default mode):
// SIPp replays its own telephone-event captures (sip-tester's dtmf_2833_*.pcap). Either way the app
// sees each digit once, in order, as ChannelDtmfReceived. (INFO DTMF: sipp-offers.test.ts.)
// Skipped when sipp or sox, or SIPp's captures, are missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'inband-app';
/** Each digit's row and column frequency (Hz). */
const DIGIT_TONES: Record<string, readonly [number, number]> = { '1': [697, 1209], '5': [770, 1336], '9': [852, 1477], '#': [941, 1477] };
const DIGITS = ['1', '5', '9', '#'];
/** Where Debian's sip-tester puts SIPp's RTP captures (one RFC 4733 digit each). */
const SIPP_CAPTURES = '/usr/share/sip-tester';
const CAPTURED_DIGITS = ['1', '5', '9'];
const HAVE_CAPTURES = CAPTURED_DIGITS.every((digit) => existsSync(join(SIPP_CAPTURES, `dtmf_2833_${digit}.pcap`)));
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
  setup = await startSippServer('sipp-inband', `[inband-in]\nexten => 100,1,Stasis(${APP})\n`, {
      endpoint: { tones: { context: 'inband-in', allow: 'ulaw', aors: 'tones', dtmf_mode: 'inband' }, events: { context: 'inband-in', allow: 'ulaw', aors: 'events' } },
      aor: { tones: { max_contacts: 1 }, events: { max_contacts: 1 } },
    }, APP);
  digitsDir = join(setup.work, 'digits');
  mkdirSync(digitsDir);
  writeDigits(digitsDir);
  if (HAVE_CAPTURES) for (const digit of CAPTURED_DIGITS) copyFileSync(join(SIPP_CAPTURES, `dtmf_2833_${digit}.pcap`), join(setup.work, `dtmf_2833_${digit}.pcap`));
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);

/** Answers the next call from `caller` and collects the digits it raises until it ends. */
async function digitsOfCall(caller: string): Promise<string[]> {
  const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith(`PJSIP/${caller}-`));
  const id = start.channel.id as string;
  assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  const digits: string[] = [];
  for (;;) {
    const event = await nextEvent((e) => (e.type === 'ChannelDtmfReceived' || e.type === 'ChannelDestroyed') && e.channel?.id === id, 30_000);
    if (event.type === 'ChannelDestroyed') return digits;
    digits.push(event.digit as string);
  }
}

describe('DTMF from SIPp', { skip: !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false }, () => {
  test('the tones SIPp streams raise ChannelDtmfReceived 1, 5, 9, # in order, each once; no telephone-event in the answer', { timeout: 60_000 }, async () => {
    const run = sipp('call-hangup.xml', [setup.target(), '-s', '100', '-set', 'caller', 'tones', '-d', '4000'], { cwd: digitsDir, timeoutMs: 30_000, trace: true });
    const digits = await digitsOfCall('tones');
    assert.deepEqual(digits, DIGITS, 'each digit once, in order (the 6 s of silence keep SIPp\'s loop from repeating them)');
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const [ok] = tracedMessages(result, /^SIP\/2\.0 200/);
    assert.doesNotMatch(ok ?? '', /telephone-event/, 'inband: no telephone-event answered');
  });

  test('RFC 4733 telephone-events SIPp replays raise ChannelDtmfReceived 1, 5, 9 in order, each once', { skip: HAVE_CAPTURES ? false : `SIPp's captures are not in ${SIPP_CAPTURES}`, timeout: 60_000 }, async () => {
    const run = sipp('call-rfc4733-digits.xml', [setup.target(), '-s', '100', '-set', 'caller', 'events'], { cwd: setup.work, timeoutMs: 30_000, trace: true });
    const digits = await digitsOfCall('events');
    assert.deepEqual(digits, CAPTURED_DIGITS);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const [ok] = tracedMessages(result, /^SIP\/2\.0 200/);
    assert.match(ok ?? '', /^a=rtpmap:101 telephone-event\/8000/m, 'telephone-event answered');
  });
});
