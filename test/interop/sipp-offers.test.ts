// Offers in the bodies and requests only our raw test peer sent before, now from a real peer, SIPp:
// - a SIP-I/SIP-T gateway's INVITE whose body is multipart/mixed or multipart/alternative (SDP
//   beside an ISUP-like part): answered from the SDP part, the caller's tone heard;
// - UPDATE offers in a confirmed call (RFC 3311 §5.2): a new port and codec order (the server's
//   RTP moves there, in PCMA), hold and unhold (ChannelHold, ChannelUnhold);
// - an UPDATE offer in the early dialog, after a reliable 183 PRACKed (RFC 3311 §5.1, RFC 3262):
//   answered, and early media (a tone played before the answer), then the answered call's, go where
//   it said; one before the INVITE's offer
//   was answered (after a reliable 180 without SDP) is refused 500 with Retry-After (RFC 3311 §5.2,
//   as Asterisk's stack refuses it) and changes nothing; a callee's before it answered our INVITE's
//   offer is refused 491;
// - a caller refreshing its session timer (RFC 4028) by UPDATE without SDP: granted again, and the
//   call outlives the point where an unrefreshed session ends;
// - DTMF as SIP INFO both ways (dtmf_mode=info): the server's INFOs pace the scenarios, SIPp's
//   application/dtmf-relay INFO raises ChannelDtmfReceived.
// Skipped with a message when sipp (or sox, for the audio) is not installed.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { alawToLinear } from '../../src/media/g711.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { HAVE_SIPP, HAVE_SOX, callSippCallee, explained, nextEvent as nextEventOn, randomPort, sipp as runSipp, startSippServer, tracedMessages, waitFor, writeSippTone, type Json, type SippCallee, type SippRun, type SippServer } from './sipp-peer.ts';

const APP = 'offers-app';
/** Where SIPp plays bob, the callee (his static contact). */
const BOB_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  setup = await startSippServer(
    'sipp-offers',
    `[offers-in]\nexten => 100,1,Stasis(${APP})\nexten => 200,1,Progress()\n same => n,Stasis(${APP})\nexten => 300,1,Ringing()\n same => n,Stasis(${APP})\n`,
    {
      endpoint: {
        // A gateway: u-law only, as the scenario offers.
        gateway: { context: 'offers-in', allow: 'ulaw', aors: 'gateway' },
        // Both G.711 laws (the UPDATE reorders them); DTMF as INFO (it paces the scenarios).
        alice: { context: 'offers-in', allow: 'ulaw,alaw', aors: 'alice', dtmf_mode: 'info' },
        bob: { context: 'offers-in', allow: 'ulaw', aors: 'bob' },
      },
      aor: { gateway: { max_contacts: 1 }, alice: { max_contacts: 1 }, bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
  // The gateway's audio: a 1 kHz tone as u-law WAV (SIPp streams it as payload type 0).
  if (HAVE_SOX) writeSippTone(setup.work, 1000, 4, 0.5);
});

after(async () => {
  if (!HAVE_SIPP) return;
  await setup.close();
});

// Generous: on a loaded 2-core machine SIPp's first INVITE may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const post = (path: string, method = 'POST'): Promise<Response> => setup.server.ari(path, { method });
/** Bob as the server calls him: SIPp at his static contact. */
const BOB: SippCallee = { port: BOB_PORT, endpoint: 'PJSIP/bob', app: APP, eventTimeoutMs: 30_000 };
const sipp = (scenario: string, args: string[], timeoutMs = 60_000): { done: Promise<SippRun> } => runSipp(scenario, [setup.target(), ...args], { cwd: setup.work, timeoutMs, trace: true });
const startOf = (caller: string) => (e: Json) => e.type === 'StasisStart' && String(e.channel?.name).startsWith(`PJSIP/${caller}-`);

/** The 1 kHz amplitude of the samples' loudest second (8 kHz audio). */
function toneAmplitude(samples: Int16Array): number {
  let best = 0;
  for (let start = 0; start + 8000 <= samples.length; start += 4000) best = Math.max(best, Math.sqrt(2 * goertzelPower(samples.subarray(start, start + 8000), 1000, 8000)));
  return best;
}

/** A UDP socket on 127.0.0.1 standing for the port an UPDATE names; it keeps what arrives. */
async function rtpSink(): Promise<{ port: number; packets: Buffer[]; close(): void }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const packets: Buffer[] = [];
  socket.on('message', (packet) => packets.length < 5000 && packets.push(packet));
  return { port: socket.address().port, packets, close: () => socket.close() };
}

/** Waits for `count` PCMA packets at the sink and checks the last second of them carries the 1 kHz tone. */
async function assertPcmaTone(sink: { packets: Buffer[] }, what: string): Promise<void> {
  const pcma = (): Buffer[] => sink.packets.filter((p) => p.length > 12 && (p[1] & 0x7f) === 8);
  await waitFor(`60 PCMA packets at ${what}`, () => (pcma().length >= 60 ? true : undefined), 30_000).catch(() => assert.fail(`${pcma().length} PCMA packets reached ${what} (${sink.packets.length} packets in all)`));
  const samples = new Int16Array(pcma().slice(-50).flatMap((p) => [...p.subarray(12)].map((code) => alawToLinear(code))));
  const amplitude = toneAmplitude(samples);
  assert.ok(amplitude > 1000, `the PCMA at ${what} carries the 1 kHz tone (amplitude ${amplitude.toFixed(0)})`);
}

/** The SDP body of a traced response (after the blank line). */
const bodyOf = (message: string | undefined): string => (message ?? '').split(/\r?\n\r?\n/).slice(1).join('\n');

/**
 * A call from SIPp as alice running `scenario` to `exten`, its new offers naming a sink's port:
 * `steps` drive the answered-or-not channel `id`; then the app hangs up, and SIPp's run is returned
 * once it passed.
 */
async function callWithSink(scenario: string, exten: string, steps: (id: string, sink: { packets: Buffer[] }) => Promise<void>): Promise<SippRun> {
  const sink = await rtpSink();
  try {
    const run = sipp(scenario, ['-s', exten, '-set', 'caller', 'alice', '-set', 'rtpport', String(sink.port)]);
    const id = await explained(run, async () => {
      const started = (await nextEvent(startOf('alice'))).channel.id as string;
      await steps(started, sink);
      return started;
    });
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    return result;
  } finally {
    sink.close();
  }
}

describe('offers in multipart bodies and UPDATEs, with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  for (const type of ['mixed', 'alternative']) {
    test(`a multipart/${type} INVITE (SDP beside ISUP) is answered from its SDP part and the gateway's tone is heard`, { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 90_000 }, async () => {
      const name = `multipart-${type}`;
      // 4 s of the gateway's tone after the answer: a recording started late on a loaded machine still holds 1 s of it.
      const run = sipp('call-multipart.xml', ['-s', '100', '-set', 'caller', 'gateway', '-set', 'mptype', type, '-d', '4000']);
      await explained(run, async () => {
        const start = await nextEvent(startOf('gateway'));
        const id = start.channel.id as string;
        assert.equal(start.channel.state, 'Ring');
        assert.equal(start.channel.caller.number, 'gateway');
        assert.equal((await post(`/channels/${id}/answer`)).status, 204);
        await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
        const record = await post(`/channels/${id}/record?name=${name}&format=wav`);
        assert.equal(record.status, 201, await record.text());
        const destroyed = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
        assert.equal(destroyed.cause, 16, 'the gateway hung up normally');
        await nextEvent((e) => (e.type === 'RecordingFinished' || e.type === 'RecordingFailed') && e.recording?.name === name).catch(() => undefined);
      });
      const result = await run.done;
      assert.equal(result.status, 0, result.output);
      const [invite] = tracedMessages(result, /^INVITE /);
      assert.match(invite ?? '', new RegExp(`^Content-Type: multipart/${type};boundary=`, 'im'), 'SIPp sent the multipart');
      const [ok] = tracedMessages(result, /^SIP\/2\.0 200/);
      assert.match(ok ?? '', /^Content-Type:\s*application\/sdp\s*$/im, 'the answer is plain SDP');
      assert.match(bodyOf(ok), /^m=audio \d+ RTP\/AVP 0[ \r\n]/m, 'PCMU, the SDP part\'s codec');
      const file = findFile(join(setup.server.dataDir, 'recordings'), `${name}.wav`);
      assert.ok(file, 'the recording exists');
      const amplitude = toneAmplitude(wavSamples(file));
      assert.ok(amplitude > 2000, `the gateway's 1 kHz tone is in the recording (amplitude ${amplitude.toFixed(0)})`);
    });
  }

  test('UPDATE offers mid-call: a new port and codec order moves the RTP there in PCMA; sendonly holds, sendrecv resumes; INFO DTMF both ways', { timeout: 90_000 }, async () => {
    const result = await callWithSink('update-offer.xml', '100', async (id, sink) => {
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      const play = await post(`/channels/${id}/play?media=${encodeURIComponent('tone:1000')}`);
      assert.equal(play.status, 201, await play.text());
      // Digit 1 (an INFO) lets SIPp send its first UPDATE: the new port, PCMA first.
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=1`)).status, 204);
      await assertPcmaTone(sink, 'the port of the UPDATE');
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=2`)).status, 204);
      const hold = await nextEvent((e) => e.type === 'ChannelHold' && e.channel?.id === id);
      assert.ok(hold, 'the sendonly UPDATE held the call');
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=3`)).status, 204);
      await nextEvent((e) => e.type === 'ChannelUnhold' && e.channel?.id === id);
      const digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '5', 'SIPp\'s INFO digit');
    });
    const answers = tracedMessages(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*\d+ UPDATE/im.test(m));
    assert.equal(answers.length, 3, 'three UPDATEs answered 200');
    assert.match(bodyOf(answers[0]), /^m=audio \d+ RTP\/AVP 8 0\s*$/m, 'the answer follows the UPDATE\'s new order (no telephone-event: dtmf_mode=info)');
    assert.match(bodyOf(answers[1]), /^a=recvonly/m, 'hold answered recvonly');
    assert.match(bodyOf(answers[2]), /^a=sendrecv/m, 'unhold answered sendrecv');
    const infos = tracedMessages(result, /^INFO /).filter((m) => /^Content-Type:\s*application\/dtmf-relay/im.test(m));
    assert.deepEqual(infos.map((m) => /^Signal=(\S+)/m.exec(m)?.[1]), ['1', '2', '3', '5']);
  });

  test('an UPDATE offer in the early dialog (after a reliable 183, PRACKed) is answered: early media, then the answered call\'s, go where it said', { timeout: 90_000 }, async () => {
    const result = await callWithSink('update-early.xml', '200', async (id, sink) => {
      // SIPp's early INFO (digit 4) comes after its UPDATE was answered.
      const digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '4');
      // Early media: the tone goes to the UPDATE's port before the answer.
      const play = await post(`/channels/${id}/play?media=${encodeURIComponent('tone:1000')}`);
      assert.equal(play.status, 201, await play.text());
      await assertPcmaTone(sink, 'the port of the early UPDATE, before the answer');
      const unanswered = (await (await post(`/channels/${id}`, 'GET')).json()) as Json;
      assert.notEqual(unanswered.state, 'Up', 'still unanswered while the early media flowed');
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
      sink.packets.length = 0;
      await assertPcmaTone(sink, 'the port of the early UPDATE, after the answer');
    });
    const [early] = tracedMessages(result, /^SIP\/2\.0 183/);
    assert.match(early ?? '', /^RSeq:\s*\d+/im, 'the 183 is reliable');
    const [updated] = tracedMessages(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*\d+ UPDATE/im.test(m));
    assert.match(bodyOf(updated), /^m=audio \d+ RTP\/AVP 8 0\s*$/m, 'the early UPDATE\'s answer follows its order');
  });

  test('an UPDATE offer while the INVITE\'s offer is unanswered (reliable 180, no SDP) is refused 500 with Retry-After, and the 200 answers the INVITE\'s offer', { timeout: 90_000 }, async () => {
    let stray = 0;
    const result = await callWithSink('update-unanswered.xml', '300', async (id, sink) => {
      // SIPp's early INFO (digit 6) comes after its UPDATE was refused.
      const digit = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(digit.digit, '6');
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
      stray = sink.packets.length;
    });
    const [refused] = tracedMessages(result, /^SIP\/2\.0 500/);
    assert.match(refused ?? '', /^CSeq:\s*\d+ UPDATE/im);
    assert.match(refused ?? '', /^Retry-After:\s*\d+/im);
    const [ok] = tracedMessages(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*\d+ INVITE/im.test(m));
    assert.match(bodyOf(ok), /^m=audio \d+ RTP\/AVP 0 8\s*$/m, 'the 200 answers the INVITE\'s offer (PCMU first, as offered)');
    assert.equal(stray, 0, 'no RTP went to the refused offer\'s port');
  });

  test('a caller refreshing its session timer by UPDATE without SDP is granted refresher=uac again and keeps the call past the expiry point', { timeout: 150_000 }, async () => {
    const run = sipp('session-timer-peer-update.xml', ['-s', '100', '-set', 'caller', 'alice'], 120_000);
    await explained(run, async () => {
      const start = await nextEvent(startOf('alice'));
      const id = start.channel.id as string;
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      // SIPp hangs up at about 70 s, 10 s after an unrefreshed session would have been ended (60 s).
      const destroyed = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id, 120_000);
      assert.equal(destroyed.cause, 16, 'the caller hung up normally; the session did not expire');
    });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const [refreshed] = tracedMessages(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*\d+ UPDATE/im.test(m));
    assert.match(refreshed ?? '', /^Session-Expires:\s*90;refresher=uac/im);
    assert.match(refreshed ?? '', /^Content-Length:\s*0/im, 'a refresh only: no SDP in its 200');
    assert.equal(tracedMessages(result, /^BYE /).length, 1, 'one BYE, the caller\'s');
  });

  test('a callee\'s UPDATE offer in the early dialog, before it answered our INVITE\'s offer, is refused 491; its 200 then answers the call', { timeout: 90_000 }, async () => {
    const result = await callSippCallee(setup, BOB, 'answer-update-early.xml', async (id) => {
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    });
    const [refused] = tracedMessages(result, /^SIP\/2\.0 491/);
    assert.match(refused ?? '', /^CSeq:\s*1 UPDATE/im, 'the UPDATE was refused 491');
  });
});
