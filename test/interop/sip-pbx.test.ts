// PBX behaviour of SIP calls in the dialplan, with real peers (issue 19 items 9 and 10):
// - a blind transfer by a SIPp phone in a Dial() call: 202, NOTIFY 100/180/200, the phone's BYE
//   (Patchbay leaves the dialog to it, as Asterisk); the transferee runs Refer-To's extension in the
//   transferer's context; BridgeBlindTransfer;
// - an attended transfer (REFER with Replaces naming the phone's other call) connects the two
//   SIPp callees; BridgeAttendedTransfer; an INVITE with Replaces takes a call's place;
// - hold from a SIPp phone (re-INVITE sendonly, then sendrecv): ChannelHold/ChannelUnhold, the held
//   phone's RTP carries music on hold while held and the caller's tone after; with
//   moh_passthrough=yes the held phone is re-INVITEd sendonly/sendrecv instead.
// The held and transferring phones that SIPp cannot play (several dialogs, RTP inspection) are
// raw-phone.ts. Skipped when sipp or sox is not installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { RawPhone } from './raw-phone.ts';
import { sippListening } from './sipp-peer.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
const HAVE_SOX = spawnSync('sox', ['--version'], { encoding: 'utf8' }).error === undefined;
const SKIP = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;

const randomPort = (): number => 20000 + Math.floor(Math.random() * 20000);
const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT + 7 > 65000 ? BOB_PORT - 7 : BOB_PORT + 7;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let work: string;
let server: TestServer;
let events: EventSocket;
/** The held phones: dave (music on hold), erin (moh_passthrough=yes). */
const dave = new RawPhone('dave');
const erin = new RawPhone('erin');

interface SippRun {
  readonly status: number | null;
  readonly output: string;
}

function sipp(scenario: string, args: string[], port = randomPort(), timeoutMs = 30_000): Promise<SippRun> {
  const child = spawn('sipp', ['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', `${Math.round(timeoutMs / 1000)}s`, '-timeout_error', ...args], { cwd: work });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, output: output.slice(-2000) })));
}

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

before(async () => {
  if (SKIP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-sip-pbx-'));
  // The phones' audio: a 1 kHz tone (SIPp streams it as payload type 0).
  spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(
    dialplanFile,
    [
      '[phones]',
      'exten => 300,1,Dial(PJSIP/bob,20)',
      ' same => n,Hangup()',
      'exten => 200,1,Dial(PJSIP/carol,20)',
      ' same => n,Hangup()',
      'exten => 400,1,Dial(PJSIP/dave,20)',
      ' same => n,Hangup()',
      'exten => 401,1,Dial(PJSIP/erin,20)',
      ' same => n,Hangup()',
      'exten => 500,1,Stasis(pbx-app)',
      '',
    ].join('\n'),
  );
  await dave.open();
  await erin.open();
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'phones', allow: 'ulaw' },
          bob: { context: 'phones', allow: 'ulaw', aors: 'bob' },
          carol: { context: 'phones', allow: 'ulaw', aors: 'carol' },
          dave: { context: 'phones', allow: 'ulaw', aors: 'dave' },
          erin: { context: 'phones', allow: 'ulaw', aors: 'erin', moh_passthrough: 'yes' },
        },
        aor: {
          bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` },
          carol: { contact: `sip:carol@127.0.0.1:${CAROL_PORT}` },
          dave: { contact: `sip:dave@127.0.0.1:${dave.sipPort}` },
          erin: { contact: `sip:erin@127.0.0.1:${erin.sipPort}` },
        },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  dave.serverPort = server.core.pjsip.port;
  erin.serverPort = server.core.pjsip.port;
  events = await server.events('app=watcher&subscribeAll=true');
});

after(async () => {
  if (SKIP) return;
  dave.close();
  erin.close();
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 15_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

const named = (prefix: string) => (channel: Json | undefined) => String(channel?.name ?? '').startsWith(prefix);

async function hangUp(id: string): Promise<void> {
  assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
}

/** RMS of `samples` and the share of their power at 1 kHz (the phones' tone), per 20 ms frame. */
function toneShare(samples: Int16Array): { rms: number; share: number } {
  let meanSquares = 0;
  let tonePower = 0;
  const frames = Math.floor(samples.length / 160);
  for (let f = 0; f < frames; f++) {
    let energy = 0;
    for (let i = f * 160; i < (f + 1) * 160; i++) energy += samples[i] * samples[i];
    meanSquares += energy / 160;
    tonePower += goertzelPower(samples, 1000, 8000, f * 160, (f + 1) * 160);
  }
  if (frames === 0 || meanSquares === 0) return { rms: 0, share: 0 };
  return { rms: Math.round(Math.sqrt(meanSquares / frames)), share: Number((tonePower / meanSquares).toFixed(3)) };
}

describe('SIP PBX behaviour with real peers', { skip: SKIP }, () => {
  test('blind transfer: SIPp alice REFERs bob to 200 → 202, NOTIFYs until 200, alice\'s BYE; bob runs Dial(PJSIP/carol); BridgeBlindTransfer', { timeout: 90_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], BOB_PORT);
    const carol = sipp('answer-incoming.xml', [], CAROL_PORT);
    await Promise.all([sippListening(BOB_PORT), sippListening(CAROL_PORT)]);
    const alice = sipp('refer-notify-sequence.xml', [target(), '-s', '300', '-set', 'caller', 'alice', '-set', 'target', '200', '-set', 'ender', 'phone']);
    const transfer = await nextEvent((e) => e.type === 'BridgeBlindTransfer');
    assert.equal(transfer.result, 'Success');
    assert.equal(transfer.exten, '200');
    assert.equal(transfer.context, 'phones');
    assert.equal(transfer.is_external, true);
    assert.ok(named('PJSIP/alice-')(transfer.channel), transfer.channel?.name);
    assert.ok(named('PJSIP/bob-')(transfer.transferee), transfer.transferee?.name);
    const dial = await nextEvent((e) => e.type === 'Dial' && e.caller?.id === transfer.transferee.id && e.dialstatus === 'ANSWER');
    assert.ok(named('PJSIP/carol-')(dial.peer));
    const aliceRun = await alice;
    assert.equal(aliceRun.status, 0, aliceRun.output);
    await sleep(500);
    await hangUp(transfer.transferee.id);
    const [bobRun, carolRun] = await Promise.all([bob, carol]);
    assert.equal(bobRun.status, 0, bobRun.output);
    assert.equal(carolRun.status, 0, carolRun.output);
  });

  test('blind transfer by the called party: dave REFERs alice to 200 → alice\'s dialplan goes on there (Dial(PJSIP/carol)); dave gets NOTIFY 200, his BYE 200', { timeout: 90_000 }, async () => {
    const carol = sipp('answer-incoming.xml', [], CAROL_PORT);
    await sippListening(CAROL_PORT);
    const alice = sipp('call-wait-bye.xml', [target(), '-s', '400', '-set', 'caller', 'alice']);
    const invite = await dave.nextMessage(/^INVITE /, 10_000, (m) => /^a=sendrecv/m.test(m));
    const callId = /^(?:call-id|i):\s*(\S+)/im.exec(invite)?.[1] ?? '';
    await nextEvent((e) => e.type === 'Dial' && named('PJSIP/dave-')(e.peer) && e.dialstatus === 'ANSWER');
    const dialog = dave.answeredDialog(callId, invite);
    // dave holds alice first (she hears music on hold), as phones do before a blind transfer.
    assert.match(await dave.reinvite(dialog, 'sendonly'), /^SIP\/2\.0 200/);
    const held = await nextEvent((e) => e.type === 'ChannelHold' && named('PJSIP/dave-')(e.channel));
    const aliceChannel = server.core.channels.list().find((channel) => channel.name.startsWith('PJSIP/alice-') && !channel.hangingUp);
    assert.ok(held && aliceChannel?.generatorActive, 'alice hears music on hold');
    assert.match(await dave.request(dialog, 'REFER', ['Refer-To: <sip:200@127.0.0.1>']), /^SIP\/2\.0 202/);
    await dave.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 200 OK'));
    // The dialog is dave's to end (Asterisk's deferred termination): no BYE comes, his gets 200.
    await assert.rejects(dave.nextMessage(/^BYE /, 500, (m) => m.includes(callId)));
    assert.match(await dave.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
    const transfer = await nextEvent((e) => e.type === 'BridgeBlindTransfer');
    assert.equal(transfer.result, 'Success');
    assert.ok(named('PJSIP/dave-')(transfer.channel));
    assert.ok(named('PJSIP/alice-')(transfer.transferee));
    const dial = await nextEvent((e) => e.type === 'Dial' && e.caller?.id === transfer.transferee.id && e.dialstatus === 'ANSWER');
    assert.ok(named('PJSIP/carol-')(dial.peer));
    assert.equal(aliceChannel?.generatorActive, false, 'alice\'s music on hold stopped with the transfer');
    await sleep(500);
    await hangUp(transfer.transferee.id);
    const [aliceRun, carolRun] = await Promise.all([alice, carol]);
    assert.equal(aliceRun.status, 0, aliceRun.output);
    assert.equal(carolRun.status, 0, carolRun.output);
  });

  test('a REFER to an extension that does not exist: NOTIFY 404, the call goes on', { timeout: 60_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], BOB_PORT);
    await sippListening(BOB_PORT);
    const alice = new RawPhone('alice');
    await alice.open();
    alice.serverPort = server.core.pjsip.port;
    try {
      const { dialog, final } = await alice.call('300');
      assert.match(final, /^SIP\/2\.0 200/);
      const answered = await nextEvent((e) => e.type === 'Dial' && named('PJSIP/bob-')(e.peer) && e.dialstatus === 'ANSWER');
      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:999@127.0.0.1>']), /^SIP\/2\.0 202/);
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 100 Trying'));
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 404 Not Found') && /terminated/i.test(m));
      const failed = await nextEvent((e) => e.type === 'BridgeBlindTransfer' || (e.type === 'ChannelHangupRequest' && named('PJSIP/bob-')(e.channel)), 1500).catch(() => undefined);
      assert.equal(failed, undefined, 'no transfer took place and bob is still up');
      assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === answered.peer.id);
      const bobRun = await bob;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
    }
  });

  test('hostile transfers: bad Replaces → 400, an unreadable Refer-To → 400, an over-long extension → 404, Refer-Sub: false → the outcome as the response; the call survives', { timeout: 60_000 }, async () => {
    const alice = new RawPhone('alice');
    await alice.open();
    alice.serverPort = server.core.pjsip.port;
    try {
      assert.match((await alice.call('400', [`Replaces: ${'x'.repeat(2000)};to-tag=a;from-tag=b`])).final, /^SIP\/2\.0 400/);
      assert.match((await alice.call('400', ['Replaces: ;to-tag=a;from-tag=b'])).final, /^SIP\/2\.0 400/);
      const { dialog, final } = await alice.call('400');
      assert.match(final, /^SIP\/2\.0 200/);
      const answered = await nextEvent((e) => e.type === 'Dial' && named('PJSIP/dave-')(e.peer) && e.dialstatus === 'ANSWER');
      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:200@127.0.0.1?Replaces=%ZZ>']), /^SIP\/2\.0 400/);
      assert.match(await alice.request(dialog, 'REFER', [`Refer-To: <sip:${'9'.repeat(300)}@127.0.0.1>`]), /^SIP\/2\.0 202/);
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 404 Not Found'));
      const unsubscribed = await alice.request(dialog, 'REFER', ['Refer-To: <sip:998@127.0.0.1>', 'Refer-Sub: false']);
      assert.match(unsubscribed, /^SIP\/2\.0 404/);
      assert.match(unsubscribed, /^Refer-Sub:\s*false/im);
      // Replaces naming no call of ours and no external_replaces extension: 404.
      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:200@127.0.0.1?Replaces=elsewhere%3Bto-tag%3Da%3Bfrom-tag%3Db>']), /^SIP\/2\.0 202/);
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 404 Not Found'));
      assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === answered.peer.id);
      await dave.nextMessage(/^BYE /, 5000);
    } finally {
      alice.close();
    }
  });

  test('attended transfer: alice calls bob and carol, REFERs bob to carol with Replaces → bob talks to carol, alice\'s second call gets BYE, her BYE ends the first; BridgeAttendedTransfer', { timeout: 90_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], BOB_PORT);
    const carol = sipp('answer-incoming.xml', [], CAROL_PORT);
    await Promise.all([sippListening(BOB_PORT), sippListening(CAROL_PORT)]);
    const alice = new RawPhone('alice');
    await alice.open();
    alice.serverPort = server.core.pjsip.port;
    try {
      const first = await alice.call('300');
      assert.match(first.final, /^SIP\/2\.0 200/);
      const bobLeg = await nextEvent((e) => e.type === 'Dial' && named('PJSIP/bob-')(e.peer) && e.dialstatus === 'ANSWER');
      // As phones do: the first call is held (bob hears music on hold) while alice consults carol.
      assert.match(await alice.reinvite(first.dialog, 'sendonly'), /^SIP\/2\.0 200[\s\S]*a=recvonly/);
      await nextEvent((e) => e.type === 'ChannelHold' && e.channel?.id === bobLeg.caller.id);
      assert.equal(server.core.channels.get(bobLeg.peer.id)?.generatorActive, true, 'bob hears music on hold');
      const second = await alice.call('200');
      assert.match(second.final, /^SIP\/2\.0 200/);
      const replaces = encodeURIComponent(`${second.dialog.callId};to-tag=${second.dialog.remoteTag};from-tag=${second.dialog.localTag}`);
      const accepted = await alice.request(first.dialog, 'REFER', [`Refer-To: <sip:200@127.0.0.1?Replaces=${replaces}>`, 'Referred-By: <sip:alice@127.0.0.1>']);
      assert.match(accepted, /^SIP\/2\.0 202/);
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 100 Trying'));
      await alice.nextMessage(/^NOTIFY /, 5000, (m) => m.includes('SIP/2.0 200 OK') && /terminated/i.test(m));
      await alice.nextMessage(/^BYE /, 5000, (m) => m.includes(second.dialog.callId));
      // The REFER's dialog is alice's to end, as Asterisk leaves it: no BYE, hers gets 200.
      await assert.rejects(alice.nextMessage(/^BYE /, 500, (m) => m.includes(first.dialog.callId)));
      assert.match(await alice.request(first.dialog, 'BYE'), /^SIP\/2\.0 200/);
      const transfer = await nextEvent((e) => e.type === 'BridgeAttendedTransfer');
      assert.equal(transfer.result, 'Success');
      assert.equal(transfer.destination_type, 'bridge');
      assert.equal(transfer.is_external, false, 'Asterisk 22 raises a REFER-with-Replaces transfer as not external (captured)');
      assert.ok(named('PJSIP/alice-')(transfer.transferer_first_leg));
      assert.ok(named('PJSIP/alice-')(transfer.transferer_second_leg));
      assert.ok(named('PJSIP/bob-')(transfer.transferee));
      assert.ok(named('PJSIP/carol-')(transfer.transfer_target));
      assert.equal(server.core.channels.get(bobLeg.peer.id)?.generatorActive, false, 'bob\'s music on hold stopped: he hears carol');
      await sleep(500);
      // bob and carol are in one call now: hanging bob up ends carol's leg too.
      await hangUp(transfer.transferee.id);
      const [bobRun, carolRun] = await Promise.all([bob, carol]);
      assert.equal(bobRun.status, 0, bobRun.output);
      assert.equal(carolRun.status, 0, carolRun.output);
    } finally {
      alice.close();
    }
  });

  test('INVITE with Replaces: a second phone takes over alice\'s call with bob; alice gets BYE; 481 for an unknown dialog', { timeout: 60_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], BOB_PORT);
    await sippListening(BOB_PORT);
    const alice = new RawPhone('alice');
    const desk = new RawPhone('alice');
    await alice.open();
    await desk.open();
    alice.serverPort = server.core.pjsip.port;
    desk.serverPort = server.core.pjsip.port;
    try {
      const unknown = await desk.call('300', ['Replaces: nothing-here;to-tag=a;from-tag=b']);
      assert.match(unknown.final, /^SIP\/2\.0 481/);
      const { dialog, final } = await alice.call('300');
      assert.match(final, /^SIP\/2\.0 200/);
      const answered = await nextEvent((e) => e.type === 'Dial' && named('PJSIP/bob-')(e.peer) && e.dialstatus === 'ANSWER');
      const takeover = await desk.call('300', [`Replaces: ${dialog.callId};to-tag=${dialog.remoteTag};from-tag=${dialog.localTag}`]);
      assert.match(takeover.final, /^SIP\/2\.0 200/);
      await alice.nextMessage(/^BYE /, 5000);
      await sleep(300);
      await hangUp(answered.peer.id);
      await desk.nextMessage(/^BYE /, 5000, (m) => m.includes(takeover.dialog.callId));
      const bobRun = await bob;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
      desk.close();
    }
  });

  test('hold from SIPp alice: ChannelHold/ChannelUnhold; dave hears music on hold (not silence, not the tone) while held, the tone after', { timeout: 60_000 }, async (t) => {
    dave.received.length = 0;
    const alice = sipp('hold-resume.xml', [target(), '-s', '400', '-set', 'caller', 'alice']);
    const hold = await nextEvent((e) => e.type === 'ChannelHold' && named('PJSIP/alice-')(e.channel));
    const heldAt = Date.now();
    assert.equal(hold.musicclass, 'default');
    const unhold = await nextEvent((e) => e.type === 'ChannelUnhold' && e.channel?.id === hold.channel.id);
    const resumedAt = Date.now();
    const aliceRun = await alice;
    assert.equal(aliceRun.status, 0, aliceRun.output);
    assert.ok(unhold);
    const before = toneShare(dave.audioBetween(heldAt - 1500, heldAt - 200));
    const held = toneShare(dave.audioBetween(heldAt + 300, resumedAt - 100));
    const after = toneShare(dave.audioBetween(resumedAt + 300, resumedAt + 1800));
    t.diagnostic(`dave's audio (RMS, share at 1 kHz): before ${JSON.stringify(before)}, held ${JSON.stringify(held)}, after ${JSON.stringify(after)}`);
    assert.ok(before.rms > 1000 && before.share > 0.5, `the caller's tone before the hold: ${JSON.stringify(before)}`);
    assert.ok(held.rms > 300, `music on hold while held, not silence: ${JSON.stringify(held)}`);
    assert.ok(held.share < 0.2, `music on hold while held, not the caller's tone: ${JSON.stringify(held)}`);
    assert.ok(after.rms > 1000 && after.share > 0.5, `the caller's tone after the hold: ${JSON.stringify(after)}`);
    await dave.nextMessage(/^BYE /, 5000);
  });

  test('hold in an ARI mixing bridge: alice holds, dave (bridged with her by the app) hears music on hold, then her tone again', { timeout: 60_000 }, async (t) => {
    const app = await server.events('app=pbx-app');
    try {
      dave.received.length = 0;
      const alice = sipp('hold-resume.xml', [target(), '-s', '500', '-set', 'caller', 'alice']);
      const aliceStart = (await app.nextOfType('StasisStart', 10_000)) as Json;
      const created = await server.ari('/channels?endpoint=PJSIP/dave&app=pbx-app', { method: 'POST' });
      assert.equal(created.status, 200, await created.text());
      const daveStart = (await app.nextOfType('StasisStart', 10_000)) as Json;
      assert.equal((await server.ari('/bridges/held?type=mixing', { method: 'POST' })).status, 200);
      assert.equal((await server.ari(`/bridges/held/addChannel?channel=${aliceStart.channel.id},${daveStart.channel.id}`, { method: 'POST' })).status, 204);
      assert.equal((await server.ari(`/channels/${aliceStart.channel.id}/answer`, { method: 'POST' })).status, 204);
      await nextEvent((e) => e.type === 'ChannelHold' && e.channel?.id === aliceStart.channel.id);
      const heldAt = Date.now();
      await nextEvent((e) => e.type === 'ChannelUnhold' && e.channel?.id === aliceStart.channel.id);
      const resumedAt = Date.now();
      const aliceRun = await alice;
      assert.equal(aliceRun.status, 0, aliceRun.output);
      const held = toneShare(dave.audioBetween(heldAt + 300, resumedAt - 100));
      const after = toneShare(dave.audioBetween(resumedAt + 300, resumedAt + 1800));
      t.diagnostic(`dave's audio in the bridge (RMS, share at 1 kHz): held ${JSON.stringify(held)}, after ${JSON.stringify(after)}`);
      assert.ok(held.rms > 300 && held.share < 0.2, `music on hold while held: ${JSON.stringify(held)}`);
      assert.ok(after.rms > 1000 && after.share > 0.5, `the caller's tone after the hold: ${JSON.stringify(after)}`);
      await hangUp(daveStart.channel.id);
      await dave.nextMessage(/^BYE /, 5000);
      assert.equal((await server.ari('/bridges/held', { method: 'DELETE' })).status, 204);
    } finally {
      await app.close();
    }
  });

  test('moh_passthrough=yes: erin is re-INVITEd sendonly on hold and sendrecv on unhold, and hears no music', { timeout: 60_000 }, async () => {
    erin.received.length = 0;
    const alice = sipp('hold-resume.xml', [target(), '-s', '401', '-set', 'caller', 'alice']);
    await erin.nextMessage(/^INVITE /, 10_000, (m) => /^a=sendrecv/m.test(m));
    const hold = await nextEvent((e) => e.type === 'ChannelHold' && named('PJSIP/alice-')(e.channel));
    assert.ok(hold);
    await erin.nextMessage(/^INVITE /, 5000, (m) => /^a=sendonly/m.test(m));
    const heldAt = Date.now();
    await erin.nextMessage(/^INVITE /, 8000, (m) => /^a=sendrecv/m.test(m));
    const resumedAt = Date.now();
    const aliceRun = await alice;
    assert.equal(aliceRun.status, 0, aliceRun.output);
    const held = toneShare(erin.audioBetween(heldAt + 300, resumedAt - 100));
    assert.ok(held.rms < 300, `no music on hold with passthrough: ${JSON.stringify(held)}`);
    await erin.nextMessage(/^BYE /, 5000);
  });
});
