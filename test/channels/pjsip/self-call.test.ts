// Patchbay calling itself (issue: calls keyed by Call-ID alone): an endpoint whose contact is
// Patchbay's own UDP address makes an outbound leg and an inbound leg with one Call-ID and the tags
// swapped. Calls are found by dialog (Call-ID + tags), so the inbound leg is not refused 482, the
// call connects with audio both ways, and a BYE from either side ends the leg it names — as
// chan_pjsip, whose dialogs are matched by Call-ID and tags, completes a call to itself.
// A real loop is still refused (RFC 3261 §8.2.2.2): the same INVITE (Call-ID, From tag, CSeq) by a
// second branch gets 482 while the first goes on; a new From tag on that Call-ID is a new call.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findFile, wavSamples } from '../../helpers/recorded-audio.ts';
import { rawInviteText } from '../../helpers/sip-inbox.ts';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';
import { tonePower } from '../../helpers/tone-power.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let dir: string;
let server: TestServer;
let events: EventSocket;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-self-call-'));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, ['[from-loop]', 'exten => 100,1,Stasis(selfcall,inbound)', 'exten => hold,1,Wait(30)', ''].join('\n'));
  server = await startTestServer({
    dialplan: { file: dialplan },
    config_objects: {
      res_pjsip: {
        // What comes from our own address is the inbound leg.
        endpoint: { 'loop-in': { context: 'from-loop', allow: 'ulaw' } },
        identify: { 'loop-in': { endpoint: 'loop-in', match: '127.0.0.1' } },
      },
    },
  } as never);
  // The outbound endpoint's contact is this server's own SIP address, known once it listens.
  await put('aor', 'loop-out', { contact: `sip:100@127.0.0.1:${server.core.pjsip.port}` });
  await put('endpoint', 'loop-out', { context: 'from-loop', allow: 'ulaw', aors: 'loop-out' });
  events = await server.events('app=selfcall');
});

after(async () => {
  // SELF_CALL_LOG=<file> keeps the server's log lines (SIP at debug) of a failing run.
  if (process.env.SELF_CALL_LOG) writeFileSync(process.env.SELF_CALL_LOG, server.logLines.join(''));
  await events?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function put(type: string, id: string, record: Record<string, string>): Promise<void> {
  const body = JSON.stringify({ fields: Object.entries(record).map(([attribute, value]) => ({ attribute, value })) });
  const response = await server.ari(`/asterisk/config/dynamic/res_pjsip/${type}/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
  assert.equal(response.status, 200, await response.text());
}

const post = (path: string, method = 'POST'): Promise<Response> => server.ari(path, { method });

/** The next event `match` accepts, skipping others; waits are generous (a loaded machine). */
async function nextEvent(what: string, match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
    const event = (await events.next(remaining).catch(() => undefined)) as Json | undefined;
    if (event && match(event)) return event;
  }
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Places the call to ourselves and answers its inbound leg: both channels, in Stasis and Up. */
async function connectedSelfCall(): Promise<{ outbound: Json; inbound: Json }> {
  const response = await post('/channels?endpoint=PJSIP/loop-out&app=selfcall&appArgs=outbound');
  const outbound = (await response.json()) as Json;
  assert.equal(response.status, 200, JSON.stringify(outbound));
  const arrived = await nextEvent('the inbound leg in Stasis', (e) => e.type === 'StasisStart' && e.args?.[0] === 'inbound');
  const inbound = arrived.channel as Json;
  assert.match(inbound.name, /^PJSIP\/loop-in-/);
  // One Call-ID, two calls: the loop is the two legs of one dialog, not a loop to refuse.
  assert.equal(inbound.protocol_id, outbound.protocol_id);
  assert.equal((await post(`/channels/${inbound.id}/answer`)).status, 204);
  await nextEvent('the outbound leg in Stasis', (e) => e.type === 'StasisStart' && e.channel?.id === outbound.id);
  return { outbound, inbound };
}

/**
 * `samples` carry the tone of `frequency` and not the `other` one: Goertzel power in 10 Hz bins over
 * 100 ms blocks (tone-power.ts), so a concealed gap on a loaded machine does not shift the measure.
 */
function assertTone(samples: Int16Array, frequency: number, other: number, what: string): void {
  const [power, otherPower] = [tonePower(samples, frequency, 8000), tonePower(samples, other, 8000)];
  const amplitude = Math.sqrt(2 * power);
  assert.ok(samples.length >= 8000, `${what}: at least 1 s recorded (${samples.length} samples)`);
  assert.ok(amplitude > 1500, `${what}: ${frequency} Hz at amplitude ${amplitude.toFixed(0)} on average`);
  assert.ok(otherPower * 10 < power, `${what}: ${other} Hz (the leg's own tone) ${Math.sqrt(2 * otherPower).toFixed(0)} against ${amplitude.toFixed(0)}`);
}

describe('Patchbay calls itself over UDP', () => {
  test('the inbound leg is a call of its own: answered, audio both ways, the caller\'s BYE ends both legs', { timeout: 150_000 }, async () => {
    const { outbound, inbound } = await connectedSelfCall();
    assert.equal((await post(`/channels/${inbound.id}/play?media=${encodeURIComponent('tone:1000')}`)).status, 201);
    assert.equal((await post(`/channels/${outbound.id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
    assert.equal((await post(`/channels/${outbound.id}/record?name=self-out-hears&format=wav&maxDurationSeconds=2`)).status, 201);
    assert.equal((await post(`/channels/${inbound.id}/record?name=self-in-hears&format=wav&maxDurationSeconds=2`)).status, 201);
    // Both recordings end, in either order.
    const finished = new Set<string>();
    while (finished.size < 2) finished.add((await nextEvent('a recording to finish', (e) => e.type === 'RecordingFinished' && /^self-(out|in)-hears$/.test(e.recording?.name))).recording.name);
    // The outbound side hangs up: its BYE carries the tags of the inbound leg's dialog.
    assert.equal((await post(`/channels/${outbound.id}`, 'DELETE')).status, 204);
    const ended = await nextEvent('the inbound leg destroyed', (e) => e.type === 'ChannelDestroyed' && e.channel?.id === inbound.id);
    assert.equal(ended.cause, 16, 'the inbound leg ends by the BYE, normal clearing');
    const recordings = join(server.dataDir, 'recordings');
    await waitFor('both recordings', () => findFile(recordings, 'self-out-hears.wav') !== undefined && findFile(recordings, 'self-in-hears.wav') !== undefined);
    assertTone(wavSamples(findFile(recordings, 'self-out-hears.wav')!), 1000, 440, 'the inbound leg heard by the outbound one');
    assertTone(wavSamples(findFile(recordings, 'self-in-hears.wav')!), 440, 1000, 'the outbound leg heard by the inbound one');
    await waitFor('no SIP call left', () => server.core.pjsip.stats().calls === 0);
  });

  test('the callee hangs up: its BYE reaches the outbound leg, not itself', { timeout: 150_000 }, async () => {
    const { outbound, inbound } = await connectedSelfCall();
    assert.equal((await post(`/channels/${inbound.id}`, 'DELETE')).status, 204);
    const ended = await nextEvent('the outbound leg destroyed', (e) => e.type === 'ChannelDestroyed' && e.channel?.id === outbound.id);
    assert.equal(ended.cause, 16);
    await waitFor('no SIP call left', () => server.core.pjsip.stats().calls === 0);
  });

  test('each leg has its own SIP ladder: the messages of its dialog, in its direction', { timeout: 150_000 }, async () => {
    const response = await post('/channels?endpoint=PJSIP/loop-out&app=selfcall&appArgs=outbound');
    const outbound = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(outbound));
    const inbound = (await nextEvent('the inbound leg in Stasis', (e) => e.type === 'StasisStart' && e.args?.[0] === 'inbound')).channel as Json;
    assert.equal((await post(`/channels/${inbound.id}/ring`)).status, 204);
    await waitFor('the outbound leg ringing', () => server.core.channels.list().some((channel) => channel.id === outbound.id && channel.state === 'Ringing'));
    assert.equal((await post(`/channels/${inbound.id}/answer`)).status, 204);
    await nextEvent('the outbound leg in Stasis', (e) => e.type === 'StasisStart' && e.channel?.id === outbound.id);
    assert.equal((await post(`/channels/${outbound.id}`, 'DELETE')).status, 204);
    await nextEvent('the inbound leg destroyed', (e) => e.type === 'ChannelDestroyed' && e.channel?.id === inbound.id);
    await waitFor('no SIP call left', () => server.core.pjsip.stats().calls === 0);

    // The console's routes (admin, beside /ari).
    const admin = (path: string): Promise<Response> => fetch(`${server.url}/admin/${path}`, { headers: { authorization: AUTH } });
    const ladderOf = async (channelId: string): Promise<Json> => {
      const listed = (await (await admin(`sip/ladders?channel=${encodeURIComponent(channelId)}`)).json()) as Json;
      assert.equal(listed.dialogs.length, 1, `a ladder for ${channelId} ${JSON.stringify(server.core.pjsip.sipLadder.list().map((d) => [d.id, d.channels]))}`);
      const answer = await admin(`sip/ladders/${encodeURIComponent(listed.dialogs[0].id)}`);
      assert.equal(answer.status, 200);
      return (await answer.json()) as Json;
    };
    const steps = (ladder: Json): string[] => ladder.messages.map((m: Json) => `${m.direction} ${m.summary.split(' ')[0]} ${m.method}`);
    // Wait for the last 200 (to the BYE) to reach both ladders.
    await waitFor('both ladders complete', () => {
      const ladders = server.core.pjsip.sipLadder.list().filter((dialog) => dialog.callId === outbound.protocol_id);
      return ladders.length === 2 && ladders.every((dialog) => dialog.messages.some((m) => m.method === 'BYE' && m.summary.startsWith('200')));
    });
    const [ofOutbound, ofInbound] = [await ladderOf(outbound.id), await ladderOf(inbound.id)];
    assert.equal(ofOutbound.call_id, outbound.protocol_id);
    assert.equal(ofInbound.call_id, outbound.protocol_id, 'one Call-ID');
    assert.notEqual(ofOutbound.id, ofInbound.id, 'two ladders');
    assert.deepEqual(ofOutbound.channels.map((c: Json) => c.id), [outbound.id]);
    assert.deepEqual(ofInbound.channels.map((c: Json) => c.id), [inbound.id]);
    // The caller's side sends what the callee's side receives, and the other way round.
    assert.deepEqual(steps(ofOutbound), ['out INVITE INVITE', 'in 100 INVITE', 'in 180 INVITE', 'in 200 INVITE', 'out ACK ACK', 'out BYE BYE', 'in 200 BYE']);
    assert.deepEqual(steps(ofInbound), ['in INVITE INVITE', 'out 100 INVITE', 'out 180 INVITE', 'out 200 INVITE', 'in ACK ACK', 'in BYE BYE', 'out 200 BYE']);
    // A Call-ID alone still names a ladder (the newest of it), as before ladders were per dialog.
    assert.equal((await admin(`sip/ladders/${encodeURIComponent(outbound.protocol_id)}`)).status, 200);
  });

  test('the caller gives up while the inbound leg rings: the CANCEL ends the inbound leg', { timeout: 150_000 }, async () => {
    const response = await post('/channels?endpoint=PJSIP/loop-out&app=selfcall&appArgs=outbound');
    const outbound = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(outbound));
    const inbound = (await nextEvent('the inbound leg in Stasis', (e) => e.type === 'StasisStart' && e.args?.[0] === 'inbound')).channel as Json;
    assert.equal((await post(`/channels/${inbound.id}/ring`)).status, 204);
    await waitFor('the outbound leg ringing', () => server.core.channels.list().some((channel) => channel.id === outbound.id && channel.state === 'Ringing'));
    assert.equal((await post(`/channels/${outbound.id}`, 'DELETE')).status, 204);
    await nextEvent('the inbound leg destroyed', (e) => e.type === 'ChannelDestroyed' && e.channel?.id === inbound.id);
    await waitFor('no SIP call left', () => server.core.pjsip.stats().calls === 0);
  });
});

describe('merged requests (RFC 3261 §8.2.2.2)', () => {
  const socket = dgram.createSocket('udp4');
  const statuses: Array<{ branch: string; status: number }> = [];

  before(async () => {
    socket.on('message', (data) => {
      const text = data.toString('latin1');
      const status = /^SIP\/2\.0 (\d{3})/.exec(text)?.[1];
      const branch = /^Via:.*branch=([^;\s]+)/im.exec(text)?.[1];
      if (status && branch) statuses.push({ branch, status: Number(status) });
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  });

  after(() => socket.close());

  function invite(callId: string, fromTag: string, branch: string): void {
    socket.send(rawInviteText({ serverPort: server.core.pjsip.port, localPort: socket.address().port, user: 'hold', fromUser: 'forker', callId, branch, fromTag }), server.core.pjsip.port, '127.0.0.1');
  }

  const finalOf = (branch: string): number | undefined => statuses.find((entry) => entry.branch === branch && entry.status >= 200)?.status;

  test('the same INVITE by a second branch gets 482; the first call goes on; another From tag is a call of its own', { timeout: 150_000 }, async () => {
    const callId = `merged-${randomBytes(6).toString('hex')}`;
    const tag = randomBytes(4).toString('hex');
    const [first, second, third] = [0, 1, 2].map(() => `z9hG4bK${randomBytes(6).toString('hex')}`);
    invite(callId, tag, first);
    await waitFor('the first call', () => server.core.channels.list().some((channel) => channel.protocolId === callId));
    invite(callId, tag, second);
    await waitFor('a final answer to the second branch', () => finalOf(second) !== undefined);
    assert.equal(finalOf(second), 482);
    assert.equal(finalOf(first), undefined, 'the first INVITE is still being served');
    invite(callId, randomBytes(4).toString('hex'), third);
    await waitFor('the second call', () => server.core.channels.list().filter((channel) => channel.protocolId === callId).length === 2);
    assert.equal(finalOf(third), undefined);
    for (const channel of server.core.channels.list().filter((candidate) => candidate.protocolId === callId)) channel.hangup(16);
    await waitFor('both refused with a final answer', () => finalOf(first) !== undefined && finalOf(third) !== undefined);
  });
});
