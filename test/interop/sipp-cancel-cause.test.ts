// A caller that CANCELs its INVITE while Dial() rings a callee, both real SIP peers (SIPp): the
// cause Patchbay reports is chan_pjsip's. Asterisk 22 ends the caller's session with the INVITE's
// 487: with no Reason in the CANCEL the channel's cause is hangup_sip2cause(487) = 127
// (interworking), else the Reason's (res_pjsip_rfc3326: Q.850 first, else SIP mapped as a status);
// its tech_cause is 487, and ast_queue_hangup publishes both in ChannelHangupRequest. app_dial then
// reports DIALSTATUS=CANCEL and hangs the ringing callee up with the caller's cause, which our
// CANCEL to it carries as Reason.
// Seen here: the caller's ChannelHangupRequest and ChannelDestroyed causes, HANGUPCAUSE and
// DIALSTATUS in the `h` extension, the callee's ChannelDestroyed cause and the Reason of the CANCEL
// the callee received. Also a BYE with a Reason: its cause is the channel's, announced.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { explained, HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, ofChannel, randomPort, SCENARIOS, sipp, startSippServer, tracedMessages, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'cancel-cause-app';
const BOB_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer(
    'sipp-cancel-cause',
    [
      '[cancel-in]',
      'exten => 200,1,Dial(PJSIP/bob,30)',
      ' same => n,Hangup()',
      'exten => 300,1,Answer()',
      ' same => n,Wait(30)',
      'exten => h,1,UserEvent(CancelEnded,dialstatus: ${DIALSTATUS},hangupcause: ${HANGUPCAUSE})',
      '',
    ].join('\n'),
    {
      endpoint: { alice: { context: 'cancel-in', allow: 'ulaw' }, bob: { context: 'cancel-in', allow: 'ulaw', aors: 'bob' } },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
  // The BYE test's caller streams this tone while its call lasts.
  if (HAVE_SOX) writeSippTone(setup.work, 440, 5, 0.5);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

// Generous: on a loaded 2-core machine SIPp's messages may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);

/** cancel-ringing.xml with `reason` added to its CANCEL (a copy in the work directory), or as it is. */
function cancelScenario(reason: string | undefined): string {
  if (reason === undefined) return 'cancel-ringing.xml';
  const copy = join(setup.work, `cancel-ringing-${reason.replace(/[^A-Za-z0-9]/g, '')}.xml`);
  const text = readFileSync(join(SCENARIOS, 'cancel-ringing.xml'), 'utf8').replace('      CSeq: 1 CANCEL\n', `      CSeq: 1 CANCEL\n      Reason: ${reason}\n`);
  assert.notEqual(text, readFileSync(join(SCENARIOS, 'cancel-ringing.xml'), 'utf8'), 'the Reason went into the CANCEL');
  writeFileSync(copy, text);
  return copy;
}

describe('a caller CANCELs while Dial() rings: the causes chan_pjsip and app_dial report', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  for (const [reason, cause] of [
    [undefined, 127],
    ['Q.850;cause=31', 31],
    ['SIP;cause=200;text="Call completed elsewhere"', 16],
  ] as const) {
    test(`CANCEL ${reason === undefined ? 'without a Reason' : `with Reason ${reason}`}: the caller ends with cause ${cause}, DIALSTATUS=CANCEL, the callee is CANCELled with it`, { timeout: 90_000 }, async () => {
      const seen: Json[] = [];
      const bob = sipp('ring-wait-cancel.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
      // SIPp binds its port as it starts; Dial's INVITE must not come before.
      await bob.listening;
      const alice = sipp(cancelScenario(reason), [setup.target(), '-s', '200', '-set', 'caller', 'alice', '-d', '500'], { cwd: setup.work, timeoutMs: 60_000 });
      await explained(alice, async () => {
        const collect = (match: (event: Json) => boolean) => nextEvent((event) => (seen.push(event), match(event)));
        const caller = (await collect((e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/alice-'))).channel.id as string;
        const ended = await collect((e) => e.type === 'ChannelUserevent' && e.eventname === 'CancelEnded' && e.channel?.id === caller);
        assert.equal(ended.userevent.dialstatus, 'CANCEL');
        assert.equal(ended.userevent.hangupcause, String(cause), 'HANGUPCAUSE in h');
        const destroyed = await collect(ofChannel('ChannelDestroyed', caller));
        assert.equal(destroyed.cause, cause, "the caller's ChannelDestroyed cause");
        const [request] = seen.filter((e) => e.type === 'ChannelHangupRequest' && e.channel?.id === caller);
        assert.ok(request, 'the CANCEL raised a hang-up request');
        assert.equal(request.cause, cause, "the hang-up request carries the channel's cause");
        assert.equal(request.tech_cause, 487, 'and the 487 as tech_cause');
        assert.equal(request.soft, undefined);
        assert.equal(destroyed.tech_cause, 487);
        const callee = seen.find((e) => e.type === 'ChannelDestroyed' && String(e.channel?.name).startsWith('PJSIP/bob-')) ?? (await nextEvent((e) => e.type === 'ChannelDestroyed' && String(e.channel?.name).startsWith('PJSIP/bob-')));
        assert.equal(callee.cause, cause, "the callee is hung up with the caller's cause");
      });
      const [aliceRun, bobRun] = await Promise.all([alice.done, bob.done]);
      assert.equal(aliceRun.status, 0, aliceRun.output);
      assert.equal(bobRun.status, 0, bobRun.output);
      const [cancel] = tracedMessages(bobRun, /^CANCEL /);
      assert.match(cancel ?? '', new RegExp(`^Reason:\\s*Q\\.850;cause=${cause}\\s*$`, 'im'), 'our CANCEL to the callee carries the cause');
    });
  }

  test("a BYE with Reason Q.850;cause=17: the channel's cause, announced in its hang-up request", { timeout: 90_000 }, async () => {
    const copy = join(setup.work, 'call-hangup-reason.xml');
    const original = readFileSync(join(SCENARIOS, 'call-hangup.xml'), 'utf8');
    const text = original.replace('      CSeq: 10 BYE\n', '      CSeq: 10 BYE\n      Reason: Q.850;cause=17\n');
    assert.notEqual(text, original, 'the Reason went into the BYE');
    writeFileSync(copy, text);
    const alice = sipp(copy, [setup.target(), '-s', '300', '-set', 'caller', 'alice', '-d', '500', '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: setup.work, timeoutMs: 60_000 });
    await explained(alice, async () => {
      const caller = (await nextEvent((e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/alice-'))).channel.id as string;
      const request = await nextEvent(ofChannel('ChannelHangupRequest', caller));
      assert.equal(request.cause, 17);
      assert.equal(request.soft, undefined);
      const destroyed = await nextEvent(ofChannel('ChannelDestroyed', caller));
      assert.equal(destroyed.cause, 17);
    });
    assert.equal((await alice.done).status, 0);
  });
});
