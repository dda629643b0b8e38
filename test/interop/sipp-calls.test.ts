// The SIP technology against a real peer, SIPp (Debian package sip-tester, installed by .ci/run):
// registration with digest (and a wrong password refused), a call into a Stasis application that
// answers and hears the peer's 1 kHz tone in a recording, a call the peer hangs up and one the
// application hangs up, a ringing call the peer cancels, an application calling a registered peer,
// and MESSAGE both ways. Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, ofChannel, randomPort, sipp as runSipp, startSippServer, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';
import { TestPhone as UdpTestPhone } from './test-phone.ts';

let setup: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;

/** The SIP port of SIPp when it plays bob's phone (bob's static contact). */
const BOB_PORT = randomPort();

const sipp = (scenario: string, args: string[], timeoutMs = 20_000, port = randomPort()): ReturnType<typeof runSipp> => runSipp(scenario, args, { cwd: work, timeoutMs, port });

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

before(async () => {
  if (!HAVE_SIPP) return;
  setup = await startSippServer('sipp', '[sip-in]\nexten => 100,1,Stasis(sip-app)\nexten => 200,1,Stasis(sip-app)\nexten => 300,1,Dial(PJSIP/bob,10)\n same => n,Hangup()\n', {
    endpoint: {
      alice: { context: 'sip-in', allow: 'ulaw,alaw', auth: 'alice-auth', aors: 'alice' },
      bob: { context: 'sip-in', allow: 'ulaw', aors: 'bob' },
      carol: { context: 'sip-in', allow: 'ulaw', aors: 'carol' },
    },
    auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 'wonderland' } },
    aor: { alice: { max_contacts: 1, remove_existing: 'yes' }, bob: { max_contacts: 1, remove_existing: 'yes', contact: `sip:bob@127.0.0.1:${BOB_PORT}` }, carol: { max_contacts: 1 } },
  }, 'sip-app');
  ({ work, server, events } = setup);
  // The peer's audio: a 1 kHz tone as u-law WAV (SIPp streams it as payload type 0).
  if (HAVE_SOX) writeSippTone(work, 1000, 4, 0.5);
});

after(async () => {
  if (!HAVE_SIPP) return;
  await setup.close();
});

/** The next event matching `match`, skipping others, within `timeoutMs`. */
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> => nextEventOn(events, match, timeoutMs);

async function post(path: string, method = 'POST'): Promise<Response> {
  return server.ari(path, { method });
}



/** Frequency by counting zero crossings of the loud part of `samples` (8 kHz). */
function zeroCrossingFrequency(samples: Int16Array): number {
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) if ((samples[i - 1] < 0) !== (samples[i] < 0)) crossings++;
  return (crossings / 2) * (8000 / samples.length);
}

/** The longest run of 20 ms frames with energy, as one sample array. */
function loudPart(samples: Int16Array): Int16Array {
  let best: [number, number] = [0, 0];
  let start = -1;
  for (let f = 0; f * 160 + 160 <= samples.length; f++) {
    let energy = 0;
    for (let i = f * 160; i < f * 160 + 160; i++) energy += samples[i] * samples[i];
    const loud = Math.sqrt(energy / 160) > 300;
    if (loud && start < 0) start = f;
    if ((!loud || f * 160 + 320 > samples.length) && start >= 0) {
      const end = loud ? f + 1 : f;
      if (end - start > best[1] - best[0]) best = [start, end];
      start = -1;
    }
  }
  return samples.subarray(best[0] * 160, best[1] * 160);
}

/** The recording ends with the channel: waits for RecordingFinished and ChannelDestroyed, in either order. */
async function endOfRecordedCall(channelId: string, name: string): Promise<Json> {
  let destroyed: Json | undefined;
  let finished = false;
  while (!destroyed || !finished) {
    const event = await nextEvent((e) => (e.type === 'ChannelDestroyed' && e.channel?.id === channelId) || ((e.type === 'RecordingFinished' || e.type === 'RecordingFailed') && e.recording?.name === name), 15_000);
    if (event.type === 'ChannelDestroyed') destroyed = event;
    else {
      assert.equal(event.type, 'RecordingFinished');
      finished = true;
    }
  }
  return destroyed;
}

/** Runs a call from SIPp into sip-app, answers it and records it; returns the recording's samples. */
async function callAndRecord(scenario: string, caller: string, extra: string[], name: string): Promise<Int16Array> {
  const run = sipp(scenario, [target(), '-s', '100', '-set', 'caller', caller, '-d', '2000', ...extra]);
  const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
  const channel = start.channel as Json;
  assert.match(channel.name, new RegExp(`^PJSIP/${caller}-`));
  assert.equal(channel.state, 'Ring');
  assert.equal(channel.caller.number, caller);
  assert.equal((await post(`/channels/${channel.id}/answer`)).status, 204);
  const record = await post(`/channels/${channel.id}/record?name=${name}&format=wav`);
  assert.equal(record.status, 201, await record.text());
  const destroyed = await endOfRecordedCall(channel.id, name);
  assert.equal(destroyed.cause, 16);
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  const file = findFile(join(server.dataDir, 'recordings'), `${name}.wav`);
  assert.ok(file, 'the recording exists');
  return wavSamples(file);
}

function assertTone(samples: Int16Array): void {
  const loud = loudPart(samples);
  assert.ok(loud.length >= 8000, `at least 1 s of audio in the recording (${loud.length} loud samples of ${samples.length})`);
  const frequency = zeroCrossingFrequency(loud);
  assert.ok(Math.abs(frequency - 1000) < 30, `the recorded tone is ${frequency.toFixed(1)} Hz`);
  const amplitude = Math.sqrt(2 * goertzelPower(loud, 1000, 8000));
  assert.ok(amplitude > 2000, `1 kHz amplitude ${amplitude}`);
}

/** The phone of test-phone.ts calling this suite's server. */
class TestPhone extends UdpTestPhone {
  constructor() {
    super(() => server.core.pjsip.port);
  }
}

/** Is this RTP payload (PCMU) more than silence? u-law silence is 0xFF/0x7F and their neighbours. */
function loudUlaw(payload: Buffer): boolean {
  let loud = 0;
  for (const byte of payload) if ((byte & 0x7f) < 0x60) loud++;
  return loud > payload.length / 4;
}


/** Calls from the test phone into sip-app and answers over ARI; the channel id and the phone's 200 OK. */
async function answeredCall(phone: TestPhone): Promise<{ id: string; ok: string }> {
  const calling = phone.call();
  const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
  const id = (start.channel as Json).id as string;
  assert.equal((await post(`/channels/${id}/answer`)).status, 204);
  return { id, ok: await calling };
}

describe('SIP interop with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('REGISTER with digest puts the endpoint online; a wrong password is refused and changes nothing', async () => {
    const wrong = sipp('register-wrong-password.xml', [target(), '-s', 'alice', '-au', 'alice', '-ap', 'guess']);
    assert.equal((await wrong.done).status, 0, (await wrong.done).output);
    let endpoint = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as { state: string };
    assert.equal(endpoint.state, 'offline');
    const right = sipp('register-digest.xml', [target(), '-s', 'alice', '-au', 'alice', '-ap', 'wonderland']);
    const run = await right.done;
    assert.equal(run.status, 0, run.output);
    endpoint = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as { state: string };
    assert.equal(endpoint.state, 'online');
    const change = await events.nextOfType('EndpointStateChange', 3000);
    assert.equal((change.endpoint as { resource: string }).resource, 'alice');
  });

  test('a SIPp call into Stasis: answered, recorded, the peer\'s 1 kHz tone is in the recording, BYE from the peer ends it with cause 16', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
    assertTone(await callAndRecord('call-hangup.xml', 'bob', [], 'sipp-bob'));
  });

  test('the same call with digest authentication (alice)', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
    assertTone(await callAndRecord('call-hangup-auth.xml', 'alice', ['-au', 'alice', '-ap', 'wonderland'], 'sipp-alice'));
  });

  test('the application hangs up: SIPp receives BYE and answers 200', { timeout: 60_000 }, async () => {
    const run = sipp('call-wait-bye.xml', [target(), '-s', '100', '-set', 'caller', 'bob']);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
    const id = (start.channel as Json).id as string;
    assert.equal((await post(`/channels/${id}/answer`)).status, 204);
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
    assert.equal(destroyed.cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('over TCP (-t t1): a call into Stasis answered and recorded, the tone arrives, the peer\'s BYE ends it', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
    assertTone(await callAndRecord('call-hangup.xml', 'bob', ['-t', 't1'], 'sipp-bob-tcp'));
  });

  test('over TCP (-t t1): the application answers, then hangs up: SIPp receives the BYE on TCP and answers 200', { timeout: 60_000 }, async () => {
    const run = sipp('call-wait-bye.xml', [target(), '-s', '100', '-set', 'caller', 'bob', '-t', 't1']);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
    const id = (start.channel as Json).id as string;
    assert.equal((await post(`/channels/${id}/answer`)).status, 204);
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
    assert.equal(destroyed.cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('a blind transfer from SIPp: REFER in the call → 202, NOTIFY 100, ChannelTransfer; transfer_progress → NOTIFY 200; the app hangs up', { timeout: 60_000 }, async () => {
    const run = sipp('refer-blind.xml', [target(), '-s', '100', '-set', 'caller', 'bob']);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
    const id = (start.channel as Json).id as string;
    assert.equal((await post(`/channels/${id}/answer`)).status, 204);
    const transfer = await nextEvent((e) => e.type === 'ChannelTransfer' && e.referred_by?.source_channel?.id === id);
    assert.equal(transfer.refer_to.requested_destination.destination, '200');
    assert.equal(transfer.state, undefined);
    assert.equal((await post(`/channels/${id}/transfer_progress?states=channel_answered`)).status, 204);
    const answered = await nextEvent((e) => e.type === 'ChannelTransfer' && e.referred_by?.source_channel?.id === id);
    assert.equal(answered.state, 'channel_answered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
    await nextEvent(ofChannel('ChannelDestroyed', id));
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('a ringing call cancelled by the peer: 200 to the CANCEL, 487 to the INVITE, the channel hung up with cause 127', { timeout: 60_000 }, async () => {
    const run = sipp('cancel-ringing.xml', [target(), '-s', '100', '-set', 'caller', 'bob', '-d', '500']);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
    const id = (start.channel as Json).id as string;
    assert.equal((await post(`/channels/${id}/ring`)).status, 204);
    // chan_pjsip ends the session with the INVITE's 487: cause 127 (hangup_sip2cause), tech_cause 487.
    const request = await nextEvent(ofChannel('ChannelHangupRequest', id));
    assert.equal(request.cause, 127);
    assert.equal(request.tech_cause, 487);
    const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
    assert.equal(destroyed.cause, 127);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('an application originates to bob (static contact, SIPp answers): Ringing, then Up, the callee\'s tone recorded, then the app hangs up with BYE', { timeout: 60_000 }, async () => {
    const run = sipp('answer-incoming.xml', [], 20_000, BOB_PORT);
    await run.listening;
    const response = await post('/channels?endpoint=PJSIP/bob&app=sip-app&appArgs=dialled');
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    assert.match(channel.name, /^PJSIP\/bob-/);
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === channel.id && e.channel.state === 'Ringing');
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === channel.id);
    assert.equal(start.channel.state, 'Up');
    // The callee streams the 1 kHz tone once it has the ACK: it must arrive on the outbound channel.
    const record = await post(`/channels/${channel.id}/record?name=sipp-outbound&format=wav`);
    assert.equal(record.status, 201, await record.text());
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal((await post(`/channels/${channel.id}`, 'DELETE')).status, 204);
    await endOfRecordedCall(channel.id, 'sipp-outbound');
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    if (HAVE_SOX) {
      const file = findFile(join(server.dataDir, 'recordings'), 'sipp-outbound.wav');
      assert.ok(file, 'the recording exists');
      assertTone(wavSamples(file));
    }
  });

  test('originating to an endpoint with no contact fails at once', async () => {
    const response = await post('/channels?endpoint=PJSIP/carol&app=sip-app');
    assert.ok(response.status >= 400, `status ${response.status}`);
  });

  test('MESSAGE from bob reaches a subscribed app with its X- header; sendMessage to pjsip:bob reaches SIPp', { timeout: 60_000 }, async () => {
    const subscribe = await post(`/applications/sip-app/subscription?eventSource=${encodeURIComponent('endpoint:PJSIP/bob')}`);
    assert.equal(subscribe.status, 200, await subscribe.text());
    const send = sipp('message-send.xml', [target(), '-s', '100', '-set', 'caller', 'bob']);
    const received = await nextEvent((e) => e.type === 'TextMessageReceived');
    assert.equal(received.message.body.trim(), 'hello from sipp');
    const variables = received.message.variables as Json;
    const priority = Object.entries(variables).find(([key]) => key.toLowerCase() === 'x-priority');
    assert.equal(priority?.[1], 'urgent', JSON.stringify(received.message));
    const sent = await send.done;
    assert.equal(sent.status, 0, sent.output);

    const receive = sipp('message-receive.xml', [], 20_000, BOB_PORT);
    await receive.listening;
    const out = await server.ari(`/endpoints/sendMessage?to=pjsip:bob&from=${encodeURIComponent('sip:app@patchbay')}&body=hi%20bob`, { method: 'PUT' });
    assert.equal(out.status, 202, await out.text());
    const got = await receive.done;
    assert.equal(got.status, 0, got.output);
  });

  test('a prompt played by the app reaches the peer as PCMU RTP; RFC 4733 digits both ways', { timeout: 60_000 }, async () => {
    const phone = new TestPhone();
    await phone.open();
    try {
      const { id, ok } = await answeredCall(phone);
      assert.match(ok, /a=rtpmap:101 telephone-event\/8000/);
      assert.ok(phone.remoteRtpPort > 0, 'the answer names an RTP port');

      // A prompt: the generated beep is 1 kHz.
      phone.packets.length = 0;
      const play = await post(`/channels/${id}/play?media=sound:beep`);
      assert.equal(play.status, 201, await play.text());
      await nextEvent((e) => e.type === 'PlaybackFinished', 10_000);
      const audio = phone.packets.filter((p) => (p[1] & 0x7f) === 0);
      assert.ok(audio.length >= 5, `${audio.length} PCMU packets`);
      const loud = audio.filter((p) => loudUlaw(p.subarray(12)));
      assert.ok(loud.length >= 5, `${loud.length} of ${audio.length} PCMU packets carry the beep`);

      // A digit from the phone.
      await phone.sendDigit(5, 800);
      const dtmf = await nextEvent((e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === id);
      assert.equal(dtmf.digit, '5');
      assert.ok(dtmf.duration_ms >= 50 && dtmf.duration_ms <= 200, `duration_ms ${dtmf.duration_ms}`);

      // Digits to the phone.
      phone.packets.length = 0;
      assert.equal((await post(`/channels/${id}/dtmf?dtmf=12`)).status, 204);
      const deadline = Date.now() + 10_000;
      const digitPackets = (): Buffer[] => phone.packets.filter((p) => (p[1] & 0x7f) === 101);
      const ended = (): number[] => [...new Set(digitPackets().filter((p) => (p[13] & 0x80) !== 0).map((p) => p[12]))];
      while (Date.now() < deadline && ended().length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(ended(), [1, 2], 'both digits were sent and ended');
      for (const event of [1, 2]) {
        const packets = digitPackets().filter((p) => p[12] === event);
        assert.ok((packets[0][1] & 0x80) !== 0, 'the first packet of an event has the marker bit');
        assert.equal(new Set(packets.map((p) => p.readUInt32BE(4))).size, 1, 'one timestamp per event');
        const duration = packets.at(-1)!.readUInt16BE(14);
        assert.ok(duration >= 400 && duration <= 2400, `event duration ${duration} samples`);
      }

      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      await phone.nextMessage(/^BYE /);
      await nextEvent(ofChannel('ChannelDestroyed', id));
    } finally {
      phone.close();
    }
  });

  test('after the ACK the 200 OK is not retransmitted; a late offer (INVITE without SDP) is answered in the ACK and media flows', { timeout: 60_000 }, async () => {
    const phone = new TestPhone();
    await phone.open();
    try {
      const calling = phone.call('', phone.offer().replace('a=sendrecv', 'a=sendrecv').replace('o=phone 1 1', 'o=phone 2 2'));
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
      const id = (start.channel as Json).id as string;
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      const ok = await calling;
      assert.match(ok, /^m=audio \d+ RTP\/AVP/m, 'the 200 carries our offer');
      phone.packets.length = 0;
      const play = await post(`/channels/${id}/play?media=${encodeURIComponent('tone:1000')}`);
      assert.equal(play.status, 201, await play.text());
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const loud = phone.packets.filter((p) => (p[1] & 0x7f) === 0 && loudUlaw(p.subarray(12)));
      assert.ok(loud.length >= 10, `${loud.length} loud PCMU packets after the answer in the ACK`);
      assert.deepEqual(phone.pending().filter((line) => line.startsWith('SIP/2.0 200')), [], 'no 200 OK retransmitted after the ACK');
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      await phone.nextMessage(/^BYE /);
      await nextEvent(ofChannel('ChannelDestroyed', id));
    } finally {
      phone.close();
    }
  });

  test('an offer with no common codec is refused with 488 and makes no channel; garbage SDP does not crash the server', { timeout: 30_000 }, async () => {
    const phone = new TestPhone();
    await phone.open();
    try {
      const g729 = phone.offer().replace('RTP/AVP 0 101', 'RTP/AVP 18').replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:18 G729/8000');
      const refused = await phone.call(g729);
      assert.match(refused, /^SIP\/2\.0 488/);
      const channels = (await (await server.ari('/channels')).json()) as Json[];
      assert.deepEqual(channels.filter((c) => String(c.name).startsWith('PJSIP/')), [], 'no SIP channel left');
    } finally {
      phone.close();
    }
    const garbage = new TestPhone();
    await garbage.open();
    try {
      const answer = await garbage.call('v=0\r\nm=audio banana RTP/AVP\r\nc=IN IP4\r\n\u0000\u00ff');
      assert.match(answer, /^SIP\/2\.0 [4-6]\d\d/);
    } finally {
      garbage.close();
    }
    const alive = await server.ari('/asterisk/info');
    assert.equal(alive.status, 200);
  });

  test('a 200 OK never ACKed: after 64*T1 the server sends BYE and the channel ends with cause 18', { timeout: 60_000 }, async () => {
    const phone = new TestPhone();
    await phone.open();
    try {
      const calling = phone.call(phone.offer(), '', false);
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
      const id = (start.channel as Json).id as string;
      assert.equal((await post(`/channels/${id}/answer`)).status, 204);
      await calling;
      await phone.nextMessage(/^BYE /, 45_000);
      const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id), 10_000);
      assert.equal(destroyed.cause, 18);
      assert.ok(phone.pending().filter((line) => line.startsWith('SIP/2.0 200')).length >= 3, 'the 200 OK was retransmitted meanwhile');
    } finally {
      phone.close();
    }
  });

  test('originating to bob who is busy: 486 ends the channel with cause 17 (user busy)', { timeout: 60_000 }, async () => {
    const run = sipp('busy-incoming.xml', [], 20_000, BOB_PORT);
    await run.listening;
    const response = await post('/channels?endpoint=PJSIP/bob&app=sip-app');
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    const destroyed = await nextEvent(ofChannel('ChannelDestroyed', channel.id));
    assert.equal(destroyed.cause, 17);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('originate with variables {"PJSIP_HEADER(add,X-Trace)": "abc"}: SIPp finds X-Trace: abc in the INVITE (and fails without it)', { timeout: 60_000 }, async () => {
    const originate = (variables: Record<string, string>): Promise<Response> =>
      server.ari('/channels?endpoint=PJSIP/bob&app=sip-app', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ variables }) });
    const run = sipp('headers-incoming.xml', [], 20_000, BOB_PORT);
    await run.listening;
    const response = await originate({ 'PJSIP_HEADER(add,X-Trace)': 'abc' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    assert.equal((await nextEvent(ofChannel('ChannelDestroyed', channel.id))).cause, 17);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    // The control: the same scenario refuses an INVITE without the header.
    const control = sipp('headers-incoming.xml', [], 20_000, BOB_PORT);
    await control.listening;
    const plain = (await (await originate({})).json()) as Json;
    const failed = await control.done;
    assert.notEqual(failed.status, 0, failed.output);
    await post(`/channels/${plain.id}`, 'DELETE');
    await nextEvent(ofChannel('ChannelDestroyed', plain.id));
  });

  test('the app hangs up an outbound call while it rings: CANCEL, and the channel ends', { timeout: 60_000 }, async () => {
    const run = sipp('ring-wait-cancel.xml', [], 20_000, BOB_PORT);
    await run.listening;
    const response = await post('/channels?endpoint=PJSIP/bob&app=sip-app');
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === channel.id && e.channel.state === 'Ringing');
    assert.equal((await post(`/channels/${channel.id}`, 'DELETE')).status, 204);
    await nextEvent(ofChannel('ChannelDestroyed', channel.id));
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('a re-INVITE puts the call on hold (sendonly → recvonly, no RTP to the phone) and takes it off hold', { timeout: 60_000 }, async () => {
    const phone = new TestPhone();
    await phone.open();
    try {
      const { id } = await answeredCall(phone);
      const play = await post(`/channels/${id}/play?media=${encodeURIComponent('tone:1000')}`);
      assert.equal(play.status, 201, await play.text());
      const hold = await phone.reinvite(phone.offer().replace('a=sendrecv', 'a=sendonly').replace('o=phone 1 1', 'o=phone 1 2'));
      assert.match(hold, /^SIP\/2\.0 200/);
      assert.match(hold, /^a=recvonly/m);
      await new Promise((resolve) => setTimeout(resolve, 300));
      phone.packets.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(phone.packets.filter((p) => (p[1] & 0x7f) === 0).length, 0, 'no audio to a phone that holds');
      const resume = await phone.reinvite(phone.offer().replace('o=phone 1 1', 'o=phone 1 3'));
      assert.match(resume, /^a=sendrecv/m);
      phone.packets.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.ok(phone.packets.filter((p) => (p[1] & 0x7f) === 0 && loudUlaw(p.subarray(12))).length >= 10, 'the tone again after the hold');
      assert.equal((await post(`/channels/${id}`, 'DELETE')).status, 204);
      const bye = await phone.nextMessage(/^BYE /);
      assert.match(bye, /^CSeq:\s*\d+ BYE/im);
      await nextEvent(ofChannel('ChannelDestroyed', id));
    } finally {
      phone.close();
    }
  });

  test('the app refuses a ringing call: DELETE → 603 Decline (normal clearing), reason=busy → 486, the ACK completes it', { timeout: 60_000 }, async () => {
    for (const [query, status] of [['', 603], ['?reason=busy', 486]] as const) {
      const phone = new TestPhone();
      await phone.open();
      try {
        const calling = phone.call();
        const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'sip-app');
        const id = (start.channel as Json).id as string;
        assert.equal((await post(`/channels/${id}/ring`)).status, 204);
        await phone.nextMessage(/^SIP\/2\.0 180/);
        assert.equal((await post(`/channels/${id}${query}`, 'DELETE')).status, 204);
        const final = await calling;
        assert.match(final, new RegExp(`^SIP/2\\.0 ${status} `));
        await nextEvent(ofChannel('ChannelDestroyed', id));
        await new Promise((resolve) => setTimeout(resolve, 700));
        assert.deepEqual(phone.pending().filter((line) => /^SIP\/2\.0 [3-6]/.test(line)), [], 'the final response is not retransmitted after the ACK');
      } finally {
        phone.close();
      }
    }
  });

  test('Dial(PJSIP/bob) in the dialplan: alice (digest) calls 300, SIPp bob answers, the caller\'s BYE ends both legs', { timeout: 60_000 }, async () => {
    const callee = sipp('answer-incoming.xml', [], 20_000, BOB_PORT);
    await callee.listening;
    const caller = sipp('call-hangup-auth.xml', [target(), '-s', '300', '-set', 'caller', 'alice', '-au', 'alice', '-ap', 'wonderland', '-d', '2000']);
    const begin = await nextEvent((e) => e.type === 'Dial' && String(e.peer?.name).startsWith('PJSIP/bob-'));
    assert.match(begin.caller.name, /^PJSIP\/alice-/);
    assert.equal(begin.dialstring, 'bob');
    const end = await nextEvent((e) => e.type === 'Dial' && e.peer?.id === begin.peer.id && e.dialstatus !== '');
    assert.equal(end.dialstatus, 'ANSWER');
    await nextEvent(ofChannel('ChannelDestroyed', begin.peer.id), 20_000);
    const [callerRun, calleeRun] = await Promise.all([caller.done, callee.done]);
    assert.equal(callerRun.status, 0, callerRun.output);
    assert.equal(calleeRun.status, 0, calleeRun.output);
  });
});
