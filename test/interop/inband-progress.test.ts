// Ringing before the answer heard in band, as chan_pjsip 22 does it: on an endpoint with
// inband_progress=yes, or once a 183 has carried our SDP (pjsip's negotiation done), a Ringing
// indication on an unanswered incoming call sends 183 Session Progress with SDP instead of 180 and
// the core plays the zone's ring tone as early media. Seen by a raw phone (raw-phone.ts) calling:
// the provisional responses it got, and the PCMU it received before the 200 (Goertzel in 10 Hz bins).
// The Dial() case rings a real SIPp callee that answers after five seconds. The server reads an
// indications.conf (asterisk_config_dir) whose `xx` country an endpoint's tone_zone names.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { ulawDecode } from '../../src/media/g711.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { RawPhone } from './raw-phone.ts';
import { explained, HAVE_SIPP, randomPort, sipp, startSippServer, type SippServer } from './sipp-peer.ts';

const FRAME = 160;
const LOUD_RMS = 1000;
const BOB_PORT = randomPort();
let setup: SippServer;
/** An endpoint with inband_progress=yes. */
const carol = new RawPhone('carol');
/** An endpoint without it. */
const alice = new RawPhone('alice');
/** inband_progress=yes and tone_zone=xx, a country of the indications.conf only. */
const erin = new RawPhone('erin');
const asteriskDir = mkdtempSync(join(tmpdir(), 'patchbay-indications-'));

before(async () => {
  if (!HAVE_SIPP) return;
  await carol.open();
  await alice.open();
  await erin.open();
  writeIndications('us');
  setup = await startSippServer(
    'inband-progress',
    [
      '[phones]',
      'exten => 640,1,Dial(PJSIP/bob,30)',
      ' same => n,Hangup()',
      // bob answers as progress-ring-answer.xml: 183 with SDP, 180, the answer 4 s later.
      'exten => 643,1,Dial(PJSIP/bob,30)',
      ' same => n,Hangup()',
      'exten => 641,1,Ringing()',
      ' same => n,Wait(4)',
      ' same => n,Answer()',
      ' same => n,Wait(30)',
      // Without inband_progress: a 183 with SDP first, then Ringing() is another 183 and in band too.
      'exten => 642,1,Progress()',
      ' same => n,Ringing()',
      ' same => n,Wait(4)',
      ' same => n,Answer()',
      ' same => n,Wait(30)',
      '',
    ].join('\n'),
    {
      endpoint: {
        carol: { context: 'phones', allow: 'ulaw', inband_progress: 'yes' },
        alice: { context: 'phones', allow: 'ulaw' },
        bob: { context: 'phones', allow: 'ulaw', aors: 'bob' },
        erin: { context: 'phones', allow: 'ulaw', inband_progress: 'yes', tone_zone: 'xx' },
      },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    'inband-progress-app',
    { asterisk_config_dir: asteriskDir },
  );
  carol.serverPort = setup.server.core.pjsip.port;
  alice.serverPort = setup.server.core.pjsip.port;
  erin.serverPort = setup.server.core.pjsip.port;
});

after(async () => {
  carol.close();
  alice.close();
  erin.close();
  await setup?.close();
  rmSync(asteriskDir, { recursive: true, force: true });
});

/** Writes the indications.conf with two countries, `country` the default. */
function writeIndications(country: string): void {
  const zones = ['[us]', 'description = United States', 'ringcadence = 2000,4000', 'ring = 440+480/2000,0/4000', '', '[xx]', 'description = A test country', 'ring = 500/1000|0/1000', ''];
  writeFileSync(join(asteriskDir, 'indications.conf'), ['[general]', `country=${country}`, '', ...zones].join('\n'));
}

/** `module reload indications` through ARI. */
async function reloadIndications(): Promise<void> {
  const response = await setup.server.ari('/asterisk/modules/indications', { method: 'PUT' });
  assert.equal(response.status, 204, await response.text());
}

/** The 20 ms PCMU packets `phone` received between `from` and `to`, decoded, in arrival order. */
function frames(phone: RawPhone, from: number, to: number): Int16Array[] {
  return phone.received
    .filter((packet) => packet.at >= from && packet.at < to && packet.payloadType === 0 && packet.payload.length === FRAME)
    .map((packet) => {
      const samples = new Int16Array(FRAME);
      ulawDecode(packet.payload, samples);
      return samples;
    });
}

const loud = (frame: Int16Array): boolean => Math.sqrt(meanSquare(frame)) > LOUD_RMS;

/**
 * Calls `extension` from `phone`: asserts the 183 with SDP and no 180, that the audio before the
 * 200 is the ring tone (`present` frequencies, by default the US 440+480 Hz, none of `absent`), then hangs up.
 */
async function ringsInBand(phone: RawPhone, extension: string, present: readonly number[] = [440, 480], absent: readonly number[] = [350, 620], progresses = 1): Promise<void> {
  const from = Date.now();
  const { dialog, final } = await phone.call(extension);
  const answeredAt = Date.now();
  try {
    assert.match(final, /^SIP\/2\.0 200/);
    const progress = await phone.nextMessage(/^SIP\/2\.0 183/, 1000, (m) => m.includes(dialog.callId));
    assert.match(progress, /\r\nContent-Type: application\/sdp\r\n/i, 'the 183 carries SDP');
    assert.match(progress, /\r\nm=audio \d+ RTP\/AVP 0/, 'the 183 carries the answer to the offer');
    // Each indication chan_pjsip turns into a 183 sends one, repeating the first's SDP (pjsip copies its last provisional).
    for (let more = 1; more < progresses; more++) assert.equal((await phone.nextMessage(/^SIP\/2\.0 183/, 1000, (m) => m.includes(dialog.callId))).split('\r\n\r\n')[1], progress.split('\r\n\r\n')[1]);
    await assert.rejects(phone.nextMessage(/^SIP\/2\.0 18[013]/, 300, (m) => m.includes(dialog.callId)), `no 180, and ${progresses} 183`);
    const early = frames(phone, from, answeredAt);
    const tone = early.filter(loud);
    // The first ring is 1 or 2 s (50 or 100 packets); the answer comes four or five seconds after it began.
    assert.ok(tone.length >= 40, `the ring tone before the answer: ${tone.length} loud of ${early.length} packets`);
    const audio = new Int16Array(tone.length * FRAME);
    tone.forEach((frame, index) => audio.set(frame, index * FRAME));
    const powers = Object.fromEntries([...present, ...absent].map((f) => [f, Math.round(tonePower(audio, f, 8000))]));
    const weakest = Math.min(...present.map((f) => powers[f]!));
    assert.ok(weakest > 5e6, `${present.join(' and ')} Hz are strong: ${JSON.stringify(powers)}`);
    for (const f of absent) assert.ok(powers[f]! < weakest / 100, `only the ring tone's frequencies: ${JSON.stringify(powers)}`);
  } finally {
    assert.match(await phone.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
  }
}

describe('ringing before the answer heard in band (chan_pjsip inband_progress)', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test('inband_progress=yes, Dial() to a SIPp callee that rings 5 s: the caller gets 183 with SDP, no 180, and the ring tone as early media', { timeout: 90_000 }, async () => {
    const bob = sipp('ring-pause-answer.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
    // SIPp binds its port as it starts; Dial's INVITE must not come before.
    await bob.listening;
    await explained(bob, () => ringsInBand(carol, '640'));
    const run = await bob.done;
    assert.equal(run.status, 0, run.output);
  });

  test('inband_progress=yes, Ringing() then Answer(): 183 with SDP and the ring tone before the 200', { timeout: 90_000 }, async () => {
    await ringsInBand(carol, '641');
  });

  test('inband_progress=no, Progress() then Ringing(): the 183 already sent our SDP, so ringing is a second 183 and heard in band, not a 180', { timeout: 90_000 }, async () => {
    await ringsInBand(alice, '642', undefined, undefined, 2);
  });

  test("inband_progress=no, Dial() to a SIPp callee sending 183 with SDP, then 180: the caller gets its early media's 183, a second 183 for the ringing and the ring tone in band", { timeout: 90_000 }, async () => {
    const bob = sipp('progress-ring-answer.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
    await bob.listening;
    await explained(bob, () => ringsInBand(alice, '643', undefined, undefined, 2));
    const run = await bob.done;
    assert.equal(run.status, 0, run.output);
  });

  test("tone_zone=xx, a country of indications.conf: the ring tone before the answer is that file's, 500 Hz", { timeout: 90_000 }, async () => {
    await ringsInBand(erin, '641', [500], [440, 480]);
  });

  test('module reload indications: a new default country rings new calls with its tone; a file that cannot be parsed keeps the zones in force', { timeout: 120_000 }, async () => {
    try {
      writeIndications('xx');
      await reloadIndications();
      await ringsInBand(carol, '641', [500], [440, 480]);
      writeFileSync(join(asteriskDir, 'indications.conf'), '[general]\ncountry=us\n[us\ndescription = broken\n');
      await reloadIndications();
      await ringsInBand(carol, '641', [500], [440, 480]);
    } finally {
      writeIndications('us');
      await reloadIndications();
    }
  });

  test('inband_progress=no, Ringing() alone is still a 180 without SDP and no audio', { timeout: 90_000 }, async () => {
    const from = Date.now();
    const { dialog, final } = await alice.call('641');
    const answeredAt = Date.now();
    try {
      assert.match(final, /^SIP\/2\.0 200/);
      const ringing = await alice.nextMessage(/^SIP\/2\.0 180/, 1000, (m) => m.includes(dialog.callId));
      assert.doesNotMatch(ringing, /application\/sdp/i);
      await assert.rejects(alice.nextMessage(/^SIP\/2\.0 183/, 300, (m) => m.includes(dialog.callId)), 'no 183');
      assert.equal(frames(alice, from, answeredAt).filter(loud).length, 0, 'no tone before the answer');
    } finally {
      assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
    }
  });
});
