// SDP and session behaviour against a real peer, SIPp (issue 19 items 2, 5 and 6):
// - codecs: an offer listing PCMA first is answered in the offer's order, and PCMA sent by the caller is
//   heard whatever the answer's order (incoming_call_offer_pref=local answers "0 8" and still takes PCMA);
// - 100rel (RFC 3262): a caller's "Require: 100rel" gets a reliable 180 it PRACKs; a trunk's reliable 183
//   is PRACKed; unknown Require options get 420 with Unsupported; Supported in OPTIONS answers and INVITEs;
// - session timers (RFC 4028): 422 with Min-SE below the minimum, the server refreshes as refresher and
//   ends a session its refresher let expire;
// - an offer-less re-INVITE gets a fresh offer (new o= version) and the answer in the ACK is applied.
// Skipped with a message when sipp (or sox, for the audio) is not installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { alawToLinear } from '../../src/media/g711.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
const HAVE_SOX = spawnSync('sox', ['--version'], { encoding: 'utf8' }).error === undefined;
const APP = 'session-app';
/** Where SIPp plays the trunk `bob` (its static contact). */
const TRUNK_PORT = 21000 + Math.floor(Math.random() * 20000);

let work: string;
let server: TestServer;
let events: EventSocket;

interface SippRun {
  readonly status: number | null;
  readonly output: string;
  /** Every SIP message SIPp sent and received (-trace_msg). */
  readonly messages: string;
}

/** Runs one SIPp call of `scenario`; `port` is SIPp's own SIP port. */
function sipp(scenario: string, args: string[], timeoutMs = 30_000, port = 21000 + Math.floor(Math.random() * 20000)): Promise<SippRun> {
  const trace = join(work, `${scenario}-${port}.messages.log`);
  const child = spawn(
    'sipp',
    ['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', `${Math.round(timeoutMs / 1000)}s`, '-timeout_error', '-trace_msg', '-message_file', trace, ...args],
    { cwd: work },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  return new Promise((resolve) =>
    child.on('exit', (status) => resolve({ status, output, messages: existsSync(trace) ? readFileSync(trace, 'latin1') : '' })),
  );
}

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

/** The SIP messages of a SIPp trace whose first line matches `firstLine`. */
function tracedMessages(run: SippRun, firstLine: RegExp): string[] {
  return run.messages
    .split(/-{20,}.*\r?\n/)
    .map((block) => block.replace(/^(?:\s*\r?\n)+/, '').replace(/^.*(?:message (?:received|sent)|UDP message).*\r?\n/gim, '').trimStart())
    .filter((block) => firstLine.test(block.split(/\r?\n/)[0] ?? ''));
}

before(async () => {
  if (!HAVE_SIPP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-sip-session-'));
  const dialplan = join(work, 'extensions.conf');
  writeFileSync(dialplan, `[session-in]\nexten => 100,1,Stasis(${APP})\n`);
  // The caller's audio: a 1 kHz tone as a-law WAV (SIPp streams it as payload type 8).
  if (HAVE_SOX) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'a-law', join(work, 'alaw.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: {
          // Asterisk 22's defaults: the offer's codec order, 100rel=yes, timers=yes.
          alice: { context: 'session-in', allow: 'ulaw,alaw', aors: 'alice' },
          // Our own order when answering, as chan_pjsip's incoming_call_offer_pref=local.
          carol: { context: 'session-in', allow: 'ulaw,alaw', aors: 'carol', incoming_call_offer_pref: 'local' },
          dave: { context: 'session-in', allow: 'ulaw,alaw', aors: 'dave' },
          bob: { context: 'session-in', allow: 'ulaw,alaw', aors: 'bob' },
        },
        aor: { alice: { max_contacts: 1 }, carol: { max_contacts: 1 }, dave: { max_contacts: 1 }, bob: { contact: `sip:bob@127.0.0.1:${TRUNK_PORT}` } },
      },
    },
    dialplan: { file: dialplan },
  } as never);
  events = await server.events(`app=${APP}&subscribeAll=true`);
});

after(async () => {
  if (!HAVE_SIPP) return;
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

const post = (path: string, method = 'POST'): Promise<Response> => server.ari(path, { method });



/** The 1 kHz amplitude of the samples' loudest second (8 kHz audio). */
function toneAmplitude(samples: Int16Array, frequency = 1000): number {
  let best = 0;
  for (let start = 0; start + 8000 <= samples.length; start += 4000) best = Math.max(best, Math.sqrt(2 * goertzelPower(samples.subarray(start, start + 8000), frequency, 8000)));
  return best;
}

/** A call from SIPp (`scenario`, as `caller`) into the app, answered and recorded until SIPp hangs up. */
async function recordCall(scenario: string, caller: string, name: string): Promise<{ run: SippRun; samples: Int16Array }> {
  const running = sipp(scenario, [target(), '-s', '100', '-set', 'caller', caller, '-d', '2500']);
  const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith(`PJSIP/${caller}-`));
  const id = start.channel.id as string;
  assert.equal((await post(`/channels/${id}/answer`)).status, 204);
  const record = await post(`/channels/${id}/record?name=${name}&format=wav`);
  assert.equal(record.status, 201, await record.text());
  await nextEvent((e) => e.type === 'RecordingFinished' && e.recording?.name === name, 20_000);
  const run = await running;
  assert.equal(run.status, 0, run.output);
  const file = findFile(join(server.dataDir, 'recordings'), `${name}.wav`);
  assert.ok(file, 'the recording exists');
  return { run, samples: wavSamples(file) };
}

describe('SDP and session behaviour with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('an offer of "8 0 101" is answered in its order (PCMA first) and the caller\'s PCMA is heard', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
    const { run, samples } = await recordCall('call-alaw-first.xml', 'alice', 'alaw-first');
    const [ok] = tracedMessages(run, /^SIP\/2\.0 200/);
    assert.ok(ok, 'SIPp traced the 200 OK');
    assert.match(ok, /^m=audio \d+ RTP\/AVP 8 0 101\s*$/m, 'the answer keeps the offer\'s order');
    const amplitude = toneAmplitude(samples);
    assert.ok(amplitude > 2000, `the caller's 1 kHz PCMA tone is in the recording (amplitude ${amplitude.toFixed(0)})`);
  });

  test('incoming_call_offer_pref=local answers "0 8 101", and the caller\'s PCMA (listed in the answer) is still heard', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
    const { run, samples } = await recordCall('call-alaw-first.xml', 'carol', 'alaw-local-order');
    const [ok] = tracedMessages(run, /^SIP\/2\.0 200/);
    assert.match(ok ?? '', /^m=audio \d+ RTP\/AVP 0 8 101\s*$/m, 'the answer is in the endpoint\'s order');
    const amplitude = toneAmplitude(samples);
    assert.ok(amplitude > 2000, `the caller's 1 kHz PCMA tone is in the recording (amplitude ${amplitude.toFixed(0)})`);
  });

  test('an offer-less re-INVITE gets a fresh offer (higher o= version) and the answer in the ACK moves the media (PCMA to the new port)', { timeout: 60_000 }, async () => {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const packets: Buffer[] = [];
    socket.on('message', (packet) => packets.push(packet));
    try {
      const running = sipp('reinvite-without-offer.xml', [target(), '-s', '100', '-set', 'caller', 'alice', '-set', 'rtpport', String(socket.address().port), '-d', '500']);
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/alice-'));
      const id = start.channel.id as string;
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      const play = await post(`/channels/${id}/play?media=${encodeURIComponent('tone:1000')}`);
      assert.equal(play.status, 201, await play.text());
      const deadline = Date.now() + 8000;
      while (Date.now() < deadline && packets.filter((p) => (p[1] & 0x7f) === 8).length < 60) await new Promise((resolve) => setTimeout(resolve, 100));
      const alaw = packets.filter((p) => (p[1] & 0x7f) === 8);
      assert.ok(alaw.length >= 60, `${alaw.length} PCMA packets reached the port the ACK's answer named (${packets.length} packets in all)`);
      // The last second of them (50 packets of 20 ms).
      const samples = new Int16Array(alaw.slice(-50).flatMap((p) => [...p.subarray(12)].map((code) => alawToLinear(code))));
      assert.ok(toneAmplitude(samples) > 1000, 'they carry the 1 kHz tone');
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      const run = await running;
      assert.equal(run.status, 0, run.output);
      const oks = tracedMessages(run, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*\d+ INVITE/im.test(m));
      assert.equal(oks.length >= 2, true, 'two 200 OKs to INVITEs traced');
      const version = (m: string): number => Number(/^o=\S+ \S+ (\d+)/m.exec(m)?.[1] ?? NaN);
      assert.ok(version(oks.at(-1)!) > version(oks[0]), `the new offer has a higher o= version (${version(oks[0])} → ${version(oks.at(-1)!)})`);
    } finally {
      socket.close();
    }
  });

  test('OPTIONS is answered with Supported: 100rel, timer; an unknown Require gets 420 with Unsupported; Session-Expires below 90 gets 422 with Min-SE', { timeout: 60_000 }, async () => {
    const run = await sipp('extension-refusals.xml', [target(), '-s', '100', '-set', 'caller', 'alice'], 20_000);
    assert.equal(run.status, 0, `${run.output}\n${run.messages.slice(-3000)}`);
    const channels = (await (await server.ari('/channels')).json()) as Json[];
    assert.deepEqual(channels.filter((c) => String(c.name).startsWith('PJSIP/')), [], 'no SIP channel left');
  });

  test('a caller requiring 100rel: the 180 is reliable (Require: 100rel, RSeq), the PRACK is answered, then the call is answered', { timeout: 60_000 }, async () => {
    const running = sipp('call-100rel.xml', [target(), '-s', '100', '-set', 'caller', 'alice', '-d', '500']);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/alice-'));
    const id = start.channel.id as string;
    assert.equal((await post(`/channels/${id}/ring`)).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const answered = await post(`/channels/${id}/answer`);
    assert.equal(answered.status, 204);
    await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id, 20_000);
    const run = await running;
    assert.equal(run.status, 0, run.output);
  });

  test('a trunk\'s reliable 183 with SDP is PRACKed; the INVITE says Supported: 100rel, timer and offers the calling side\'s codec first', { timeout: 60_000 }, async () => {
    const trunk = sipp('answer-183-reliable.xml', [], 30_000, TRUNK_PORT);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // formats= is the calling side's codecs (outgoing_call_offer_pref's "remote"): remote_merge puts PCMA first.
    const created = await post(`/channels?endpoint=PJSIP/bob&app=${APP}&formats=alaw`);
    const body = await created.text();
    assert.equal(created.status, 200, body);
    const id = (JSON.parse(body) as Json).id as string;
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel?.state === 'Up', 15_000);
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    const run = await trunk;
    assert.equal(run.status, 0, run.output);
    const [invite] = tracedMessages(run, /^INVITE /);
    assert.match(invite ?? '', /^Session-Expires:\s*1800/im);
    assert.match(invite ?? '', /^m=audio \d+ RTP\/AVP 8 0 101\s*$/m, 'PCMA, the calling side\'s codec, first; every allowed codec offered');
  });

  test('session timers: as refresher the server refreshes (re-INVITE, or UPDATE when allowed); a refresher that never refreshes has its session ended by BYE', { timeout: 120_000 }, async () => {
    const refreshed = sipp('session-timer-refresh.xml', [target(), '-s', '100', '-set', 'caller', 'alice'], 90_000);
    const first = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/alice-'));
    assert.equal((await post(`/channels/${first.channel.id}/answer`)).status, 204);
    const updated = sipp('session-timer-refresh-update.xml', [target(), '-s', '100', '-set', 'caller', 'dave'], 90_000);
    const third = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/dave-'));
    assert.equal((await post(`/channels/${third.channel.id}/answer`)).status, 204);
    const expiring = sipp('session-timer-expiry.xml', [target(), '-s', '100', '-set', 'caller', 'carol'], 90_000);
    const second = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.name?.startsWith('PJSIP/carol-'));
    assert.equal((await post(`/channels/${second.channel.id}/answer`)).status, 204);
    // The refresh is due at half the interval (45 s); the silent refresher's session ends at 60 s.
    const ended = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === second.channel.id, 80_000);
    assert.ok(ended, 'the expired session ended');
    const expiry = await expiring;
    assert.equal(expiry.status, 0, expiry.output);
    assert.equal((await post(`/channels/${first.channel.id}`, 'DELETE')).status, 204);
    assert.equal((await post(`/channels/${third.channel.id}`, 'DELETE')).status, 204);
    const byUpdate = await updated;
    assert.equal(byUpdate.status, 0, byUpdate.output);
    const refresh = await refreshed;
    assert.equal(refresh.status, 0, refresh.output);
    const [reinvite] = tracedMessages(refresh, /^INVITE /).slice(1);
    assert.ok(reinvite, 'the server sent a refreshing re-INVITE');
    assert.match(reinvite, /^Session-Expires:\s*90/im);
  });
});
