// A caller that CANCELs its INVITE while Dial() rings a callee, both real SIP peers (SIPp): the
// cause Patchbay reports is chan_pjsip's. Asterisk 22 ends the caller's session with the INVITE's
// 487 and queues its hang-up without a cause; with no Reason in the CANCEL the channel's cause is
// hangup_sip2cause(487) = 127 (interworking), else the Reason's (res_pjsip_rfc3326: Q.850 first,
// else SIP mapped as a status). app_dial then reports DIALSTATUS=CANCEL and hangs the ringing
// callee up with the caller's cause, which our CANCEL to it carries as Reason.
// Seen here: the caller's ChannelHangupRequest (no cause) and ChannelDestroyed cause, HANGUPCAUSE
// and DIALSTATUS in the `h` extension, the callee's ChannelDestroyed cause and the Reason of the
// CANCEL the callee received.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { explained, HAVE_SIPP, nextEvent as nextEventOn, ofChannel, randomPort, SCENARIOS, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'cancel-cause-app';
const BOB_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  setup = await startSippServer(
    'sipp-cancel-cause',
    [
      '[cancel-in]',
      'exten => 200,1,Dial(PJSIP/bob,30)',
      ' same => n,Hangup()',
      'exten => h,1,UserEvent(CancelEnded,dialstatus: ${DIALSTATUS},hangupcause: ${HANGUPCAUSE})',
      '',
    ].join('\n'),
    {
      endpoint: { alice: { context: 'cancel-in', allow: 'ulaw' }, bob: { context: 'cancel-in', allow: 'ulaw', aors: 'bob' } },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
});

after(async () => {
  if (!HAVE_SIPP) return;
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

describe('a caller CANCELs while Dial() rings: the causes chan_pjsip and app_dial report', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  for (const [reason, cause] of [
    [undefined, 127],
    ['Q.850;cause=31', 31],
    ['SIP;cause=200;text="Call completed elsewhere"', 16],
  ] as const) {
    test(`CANCEL ${reason === undefined ? 'without a Reason' : `with Reason ${reason}`}: the caller ends with cause ${cause}, DIALSTATUS=CANCEL, the callee is CANCELled with it`, { timeout: 90_000 }, async () => {
      const seen: Json[] = [];
      const bob = sipp('ring-wait-cancel.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
      // SIPp binds its port as it starts; Dial's INVITE must not come before.
      await new Promise((resolve) => setTimeout(resolve, 300));
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
        assert.equal('cause' in request ? request.cause : undefined, undefined, "chan_pjsip queues the session end's hang-up without a cause");
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
});
