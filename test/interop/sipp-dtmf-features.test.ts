// In-call DTMF features (features.conf, Dial's t/T/h) with real SIPp phones: alice (SIPp) calls
// an extension that Dial()s bob (SIPp); bob presses RFC 4733 keys (SIPp's own telephone-event
// captures; one capture per key, as a capture played twice repeats its RTP timestamp and reads as
// one digit). `#` then 2 0 1 with t: alice's call goes to extension 201, bob's leg gets BYE, and
// BridgeBlindTransfer says so (is_external false: a DTMF feature, not a protocol). `*0` with h
// (features.conf's disconnect => *0): bob is hung up, and so is alice.
// Skipped when sipp, sox or SIPp's captures are missing.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { explained, HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippCall, sippPhones, sippServerInSuite, startSippServer, writeSippTone, type Json } from './sipp-peer.ts';

const SIPP_CAPTURES = '/usr/share/sip-tester';
const CAPTURE = (key: string): string => join(SIPP_CAPTURES, `dtmf_2833_${key === '#' ? 'pound' : key === '*' ? 'star' : key}.pcap`);
const HAVE_CAPTURES = ['#', '*', '0', '1', '2', '5'].every((key) => existsSync(CAPTURE(key)));
const BOB_PORT = randomPort();
const APP = 'dtmf-features';
const skip = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : !HAVE_CAPTURES ? "SIPp's RFC 4733 captures are missing" : false;

const DIALPLAN = `
[phones]
exten => 100,1,Dial(PJSIP/bob,30,tT)
 same => n,Hangup()
exten => 101,1,Dial(PJSIP/bob,30,h)
 same => n,Hangup()
exten => 102,1,Dial(PJSIP/bob,30,hH)
 same => n,Hangup()
exten => 201,1,Answer()
 same => n,Wait(1)
 same => n,Hangup()
`;

const asteriskDir = mkdtempSync(join(tmpdir(), 'patchbay-features-'));
const setup = sippServerInSuite(skip, async () => {
  writeFileSync(join(asteriskDir, 'features.conf'), '[general]\ntransferdigittimeout = 10\n[featuremap]\nblindxfer => #\ndisconnect => *0\n');
  const started = await startSippServer('sipp-dtmf-features', DIALPLAN, sippPhones({ alice: undefined, bob: BOB_PORT }), APP, { asterisk_config_dir: asteriskDir });
  writeSippTone(started.work, 440, 30, 0.3);
  return started;
});

/** The keys bob's scenario presses, in order, as its working directory's feature-N.pcap. */
function bobPresses(keys: readonly string[]): void {
  keys.forEach((key, index) => copyFileSync(CAPTURE(key), join(setup.work, `feature-${index + 1}.pcap`)));
}

/** bob (SIPp) answering on its port and pressing `keys`; alice (SIPp) calling `exten`. */
async function callWithBobPressing(exten: string, keys: readonly string[]): Promise<{ bob: ReturnType<typeof sipp>; alice: ReturnType<typeof sippCall> }> {
  bobPresses(keys);
  const bob = sipp(`answer-press-${keys.length}-keys.xml`, [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
  await bob.listening;
  const alice = sippCall(setup, 'alice', 'call-wait-bye.xml', exten);
  return { bob, alice };
}

const named = (prefix: string) => (event: Json): boolean => String(event.channel?.name ?? '').startsWith(prefix);

describe('in-call DTMF features with SIPp phones', { skip }, () => {
  after(() => rmSync(asteriskDir, { recursive: true, force: true }));

  test("Dial(...,tT): bob presses # 2 0 1 → alice goes to 201, bob's leg gets BYE, BridgeBlindTransfer is_external false", { timeout: 90_000 }, async () => {
    const { bob, alice } = await callWithBobPressing('100', ['#', '2', '0', '1']);
    await explained(bob, async () => {
      const transfer = await nextEvent(setup.events, (e) => e.type === 'BridgeBlindTransfer', 45_000);
      assert.equal(transfer.result, 'Success');
      assert.equal(transfer.exten, '201');
      assert.equal(transfer.context, 'phones');
      assert.equal(transfer.is_external, false);
      assert.match(transfer.channel.name, /^PJSIP\/bob-/);
      assert.match(transfer.transferee.name, /^PJSIP\/alice-/);
      const aliceId = transfer.transferee.id as string;
      // alice runs extension 201 (its Wait), then is hung up there.
      const at200 = await nextEvent(setup.events, (e) => e.type === 'ChannelDialplan' && e.channel?.id === aliceId && e.dialplan_app === 'Wait', 30_000);
      assert.equal(at200.channel.dialplan.exten, '201');
    });
    const bobRun = await bob.done;
    assert.equal(bobRun.status, 0, bobRun.output);
    const aliceRun = await alice.done;
    assert.equal(aliceRun.status, 0, aliceRun.output);
  });

  test('Dial(...,h) with disconnect => *0: bob presses * 0 → bob is hung up (BYE), then alice', { timeout: 90_000 }, async () => {
    const { bob, alice } = await callWithBobPressing('101', ['*', '0']);
    await explained(bob, async () => {
      const bobGone = await nextEvent(setup.events, (e) => e.type === 'ChannelDestroyed' && named('PJSIP/bob-')(e), 45_000);
      assert.equal(bobGone.cause, 16);
      await nextEvent(setup.events, (e) => e.type === 'ChannelDestroyed' && named('PJSIP/alice-')(e), 30_000);
    });
    const bobRun = await bob.done;
    assert.equal(bobRun.status, 0, bobRun.output);
    const aliceRun = await alice.done;
    assert.equal(aliceRun.status, 0, aliceRun.output);
  });

  test('Dial(...,hH) with disconnect => *0: bob presses * 5 → the held * and then 5 reach the caller in order; nobody is hung up', { timeout: 90_000 }, async () => {
    bobPresses(['*', '5']);
    const bob = sipp('answer-press-2-keys.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
    await bob.listening;
    // The caller is a Local channel whose ;1 is in the application: what crosses the bridge to ;2 reaches it as ChannelDtmfReceived.
    const created = await setup.server.ari(`/channels?endpoint=${encodeURIComponent('Local/102@phones')}&app=${APP}`, { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const callerId = ((await created.json()) as Json).id as string;
    await explained(bob, async () => {
      await nextEvent(setup.events, (e) => e.type === 'StasisStart' && e.channel?.id === callerId, 45_000);
      const first = await nextEvent(setup.events, (e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === callerId, 45_000);
      const second = await nextEvent(setup.events, (e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === callerId, 45_000);
      assert.deepEqual([first.digit, second.digit], ['*', '5']);
      assert.equal((await setup.server.ari(`/channels/${callerId}`, { method: 'DELETE' })).status, 204);
    });
    const bobRun = await bob.done;
    assert.equal(bobRun.status, 0, bobRun.output);
  });
});
