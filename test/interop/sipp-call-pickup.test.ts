// Call pickup between real SIP phones (SIPp), as Asterisk 22 does it: alice Dial()s bob, whose
// phone rings (call_group=1). dave (pickup_group=2) dials the pickup extension *8 and is refused
// 403 (chan_pjsip hangs a failed pickup up as call rejected, 21) while bob keeps ringing; carol
// (pickup_group=1) dials *8 and takes bob's place: alice and carol talk (RTP both ways, seen in
// rtp_statistics), bob's phone receives a CANCEL with Reason Q.850 cause 26 (answered elsewhere).
// Then Pickup() and PickupChan() from the dialplan do the same. Skipped when sipp or sox is missing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { explained, HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, ofChannel, randomPort, sipp, sippServerInSuite, startSippServer, tracedMessages, writeSippTone, type Json } from './sipp-peer.ts';

const APP = 'pickup-app';
const BOB_PORT = randomPort();
const SKIP = HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed';

const setup = sippServerInSuite(SKIP, async () => {
  const server = await startSippServer(
    'sipp-call-pickup',
    [
      '[phones]',
      'exten => 200,1,Dial(PJSIP/bob,60)',
      ' same => n,Hangup()',
      'exten => 201,1,Pickup()',
      ' same => n,UserEvent(PickupFailed)',
      'exten => 202,1,PickupChan(PJSIP/bob)',
      ' same => n,UserEvent(PickupFailed)',
      '',
    ].join('\n'),
    {
      endpoint: {
        alice: { context: 'phones', allow: 'ulaw' },
        bob: { context: 'phones', allow: 'ulaw', aors: 'bob', call_group: '1,5-6', named_call_group: 'sales' },
        carol: { context: 'phones', allow: 'ulaw', pickup_group: '1' },
        dave: { context: 'phones', allow: 'ulaw', pickup_group: '2', named_pickup_group: 'support' },
      },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
  writeSippTone(server.work, 440, 30, 0.5);
  return server;
});

// Generous: on a loaded 2-core machine SIPp's messages may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const named = (type: string, prefix: string) => (event: Json) => event.type === type && String(event.channel?.name).startsWith(prefix);

/** Polls the channel's rtp_statistics until it has received and sent `packets` packets (bounded). */
async function rtpBothWays(id: string, packets: number): Promise<Json> {
  const deadline = Date.now() + 30_000;
  let last: Json = {};
  while (Date.now() < deadline) {
    const response = await setup.server.ari(`/channels/${id}/rtp_statistics`);
    if (response.status === 200) {
      last = (await response.json()) as Json;
      if (last.rxcount >= packets && last.txcount >= packets) return last;
    } else await response.text();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.fail(`RTP both ways on ${id}: ${JSON.stringify(last)}`);
}

/** alice calls 200 (Dial(PJSIP/bob)) and bob's phone rings: returns the runs and alice's and bob's channel ids. */
async function aliceCallsRingingBob() {
  const bob = sipp('ring-wait-cancel.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 90_000, trace: true });
  await bob.listening;
  const alice = sipp('call-wait-bye.xml', [setup.target(), '-s', '200', '-set', 'caller', 'alice', '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: setup.work, timeoutMs: 90_000 });
  const ids = await explained(alice, async () => {
    const caller = (await nextEvent(named('ChannelCreated', 'PJSIP/alice-'))).channel.id as string;
    const callee = (await nextEvent((e) => e.type === 'ChannelStateChange' && String(e.channel?.name).startsWith('PJSIP/bob-') && e.channel.state === 'Ringing')).channel.id as string;
    return { caller, callee };
  });
  return { alice, bob, ...ids };
}

/** `phone` calls `exten` and stays until the far end's BYE: the picker. */
function picker(phone: string, exten: string) {
  return sipp('call-wait-bye.xml', [setup.target(), '-s', exten, '-set', 'caller', phone, '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: setup.work, timeoutMs: 90_000 });
}

/** The picked-up call: alice and the picker talk, bob was CANCELled with cause 26; alice's hang-up from ARI ends both. */
async function checkPickedUp(call: Awaited<ReturnType<typeof aliceCallsRingingBob>>, pickerRun: ReturnType<typeof picker>, pickerName: string): Promise<void> {
  const seen: Json[] = [];
  await explained(pickerRun, async () => {
    const collect = (match: (event: Json) => boolean) => nextEvent((event) => (seen.push(event), match(event)));
    const bobGone = await collect(ofChannel('ChannelDestroyed', call.callee));
    assert.equal(bobGone.cause, 26, 'bob is hung up as answered elsewhere');
    const pickerId = (seen.find(named('ChannelCreated', pickerName)) ?? (await nextEvent(named('ChannelCreated', pickerName)))).channel.id as string;
    await rtpBothWays(call.caller, 25);
    await rtpBothWays(pickerId, 25);
    const dialstatus = await setup.server.ari(`/channels/${call.caller}/variable?variable=DIALSTATUS`);
    assert.equal(((await dialstatus.json()) as Json).value, 'ANSWER');
    const peerName = await setup.server.ari(`/channels/${call.caller}/variable?variable=DIALEDPEERNAME`);
    assert.match(String(((await peerName.json()) as Json).value), new RegExp(`^${pickerName}`));
    const hangup = await setup.server.ari(`/channels/${call.caller}`, { method: 'DELETE' });
    assert.equal(hangup.status, 204);
    await nextEvent(ofChannel('ChannelDestroyed', pickerId));
  });
  const [aliceRun, bobRun, pickerDone] = await Promise.all([call.alice.done, call.bob.done, pickerRun.done]);
  assert.equal(aliceRun.status, 0, aliceRun.output);
  assert.equal(bobRun.status, 0, bobRun.output);
  assert.equal(pickerDone.status, 0, pickerDone.output);
  const [cancel] = tracedMessages(bobRun, /^CANCEL /);
  assert.match(cancel ?? '', /^Reason:\s*Q\.850;cause=26\b/im, "bob's CANCEL says answered elsewhere");
}

describe('call pickup between SIPp phones (call_group, pickup_group, *8, Pickup(), PickupChan())', { skip: SKIP }, () => {
  test('*8 from outside the pickup group is refused 403 and bob keeps ringing; *8 from carol picks bob up', { timeout: 180_000 }, async () => {
    const call = await aliceCallsRingingBob();
    const dave = sipp('call-expect-refusal.xml', [setup.target(), '-s', '*8', '-set', 'caller', 'dave'], { cwd: setup.work, timeoutMs: 60_000, trace: true });
    const daveRun = await dave.done;
    assert.equal(daveRun.status, 0, daveRun.output);
    assert.equal(tracedMessages(daveRun, /^SIP\/2\.0 403/).length > 0, true, `dave is refused 403: ${daveRun.messages.slice(-1500)}`);
    const ringing = await setup.server.ari(`/channels/${call.callee}`);
    assert.equal(ringing.status, 200, 'bob still rings');
    assert.equal(((await ringing.json()) as Json).state, 'Ringing');
    await checkPickedUp(call, picker('carol', '*8'), 'PJSIP/carol-');
  });

  test('Pickup() without targets picks up by group; PickupChan(PJSIP/bob) by name', { timeout: 180_000 }, async () => {
    for (const exten of ['201', '202']) {
      const call = await aliceCallsRingingBob();
      await checkPickedUp(call, picker('carol', exten), 'PJSIP/carol-');
    }
  });

  test('Pickup() finding no ringing channel of its groups goes on in the dialplan', { timeout: 120_000 }, async () => {
    const dave = sipp('call-expect-refusal.xml', [setup.target(), '-s', '201', '-set', 'caller', 'dave'], { cwd: setup.work, timeoutMs: 60_000 });
    await explained(dave, async () => {
      const failed = await nextEvent((e) => e.type === 'ChannelUserevent' && e.eventname === 'PickupFailed');
      assert.match(String(failed.channel?.name), /^PJSIP\/dave-/);
    });
    assert.equal((await dave.done).status, 0);
  });
});
