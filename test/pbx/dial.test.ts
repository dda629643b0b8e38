// Dial() and the call-progress applications, end to end: a Local channel is originated into a
// dialplan whose `;2` half dials further Local channels; the ARI events on a WebSocket, the
// DIALSTATUS left behind and the audio/DTMF that flows once connected are checked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import { createFrame, type Frame } from '../../src/media/frame.ts';
import type { EventSocket } from '../helpers/server.ts';
import {
  assertNoChannels,
  channelName,
  channelOf,
  collectUntil,
  collectUntilAll,
  dialplanTrace,
  originate,
  startPbxServer,
  untilDestroyed,
  varsets,
  watchAll,
  type AriEvent,
  type PbxServer,
} from './pbx-helpers.ts';

const DIALPLAN = `
[predial]
exten => s,1,Set(SEEN=\${ARG1}-\${ARG2}:\${CHANNEL(name)})
 same => n,Return()

[dial-test]
exten => callee-echo,1,Answer()
 same => n,Echo()

exten => callee-slow,1,Wait(0.1)
 same => n,Answer()
 same => n,Echo()

exten => callee-short,1,Answer()
 same => n,Wait(0.05)
 same => n,Hangup(21)

exten => busy,1,Busy()
exten => congested,1,Congestion(5)
exten => ringing,1,Ringing()
 same => n,Wait(10)
exten => progress,1,Progress()
 same => n,Wait(10)

exten => caller,1,Dial(Local/callee-echo@dial-test)
 same => n,NoOp(not reached without g)

exten => caller-g,1,Dial(Local/callee-short@dial-test,,g)
 same => n,Set(RESULT=\${DIALSTATUS}:\${DIALEDPEERNAME}:\${DIALEDPEERNUMBER})
 same => n,Hangup()

exten => caller-nog,1,Dial(Local/callee-short@dial-test)
 same => n,NoOp(not reached without g)

exten => caller-predial,1,Dial(Local/busy@dial-test,,b(predial^s^1(7^eight)))
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-predial-missing,1,Dial(Local/busy@dial-test,,b(predial^nowhere^1))
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-busy,1,Dial(Local/busy@dial-test)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-congested,1,Dial(Local/congested@dial-test)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-timeout,1,Dial(Local/ringing@dial-test,0.3)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-forever,1,Dial(Local/ringing@dial-test)

exten => caller-multi,1,Dial(Local/ringing@dial-test&Local/callee-slow@dial-test&Local/busy@dial-test,5)

exten => caller-mixed,1,Dial(Local/busy@dial-test&Local/congested@dial-test)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()

exten => caller-bad,1,Dial(Nope/thing)
 same => n,Set(RESULT=\${DIALSTATUS})
 same => n,Hangup()
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  pbx = await startPbxServer(DIALPLAN);
});
after(() => pbx.stop());

/** Dial events raised on behalf of a dialplan caller, as `peer-exten:status`. */
function dialEvents(seen: readonly AriEvent[]): { caller: string; peer: string; dialstring: string; dialstatus: string }[] {
  return seen
    .filter((event) => event.type === 'Dial' && event.caller !== undefined)
    .map((event) => ({
      caller: String((event.caller as Record<string, unknown>).name),
      peer: String((event.peer as Record<string, unknown>).name),
      dialstring: String(event.dialstring),
      dialstatus: String(event.dialstatus),
    }));
}

const isDestroyedOf = (channel: Channel) => (event: AriEvent) => event.type === 'ChannelDestroyed' && channelOf(event).id === channel.id;

const echoRunning = (event: AriEvent): boolean => event.type === 'ChannelDialplan' && event.dialplan_app === 'Echo';
const dialStatusSet = (event: AriEvent): boolean => event.type === 'ChannelVarset' && event.variable === 'DIALSTATUS';

function rampFrame(): Frame {
  const frame = createFrame(8000);
  for (let i = 0; i < frame.samples.length; i++) frame.samples[i] = (i * 211) % 4000 - 2000;
  return frame;
}

describe('Dial', () => {
  before(async () => {
    events = await watchAll(pbx.server);
  });
  after(() => events.close());

  test('a Local channel that answers: Dial events, DIALSTATUS, then audio and DTMF connected both ways', async () => {
    const call = originate(pbx.server, 'Local/caller@dial-test');
    // The callee's Echo() is running once its ChannelDialplan event arrives.
    const setup = await collectUntilAll(events, [echoRunning, dialStatusSet]);
    assert.equal(await call.status, 'ANSWER');
    const dials = dialEvents(setup);
    assert.equal(dials.length, 2);
    assert.match(dials[0].peer, /^Local\/callee-echo@dial-test-[0-9a-f]{8};1$/);
    assert.deepEqual(dials, [
      { caller: call.two.name, peer: dials[0].peer, dialstring: 'callee-echo@dial-test', dialstatus: '' },
      // app_dial's outcome carries no dialstring (captured against Asterisk 22, xferfid36).
      { caller: call.two.name, peer: dials[0].peer, dialstring: '', dialstatus: 'ANSWER' },
    ]);
    // Blanked as Dial() starts, as app_dial does (the Asterisk 22 capture in test/ari/dial-bridge-fidelity.test.ts).
    assert.deepEqual(varsets(setup, call.two.name, 'DIALSTATUS'), ['', 'ANSWER']);
    assert.deepEqual(varsets(setup, call.two.name, 'DIALEDPEERNAME'), ['', dials[0].peer]);
    assert.equal(call.two.state, 'Up', 'the caller is answered');
    assert.equal(call.one.state, 'Up');

    // Audio: originator → caller ;2 → (Dial) → callee ;1 → callee ;2 Echo → back the same way.
    const heard: Int16Array[] = [];
    call.one.addFrameListener((frame) => heard.push(Int16Array.from(frame.samples)));
    const sent = rampFrame();
    call.one.write(sent);
    assert.equal(heard.length, 1);
    assert.deepEqual(heard[0], sent.samples);

    // DTMF takes the same path.
    call.one.driver.sendDigit('7', 120);
    const dtmf = await collectUntil(events, (event) => event.type === 'ChannelDtmfReceived' && channelName(event) === call.one.name);
    const path = dtmf.filter((event) => event.type === 'ChannelDtmfReceived').map((event) => channelName(event).replace(/-[0-9a-f]{8}/, ''));
    assert.deepEqual(path, ['Local/caller@dial-test;2', 'Local/callee-echo@dial-test;2', 'Local/callee-echo@dial-test;1', 'Local/caller@dial-test;1']);
    assert.equal(dtmf.at(-1)?.digit, '7');

    const callee = pbx.server.core.channels.get(dials[0].peer)!;
    call.one.hangup();
    const seen = await untilDestroyed(events, [call.one, call.two, callee, callee.peer!]);
    assert.ok(!dialplanTrace(seen, call.two.name).some((step) => step.startsWith('NoOp')), 'no g: the caller does not continue');
    assertNoChannels(pbx.server);
  });

  test('option g: when the called party hangs up the caller continues at the next priority', async () => {
    const call = originate(pbx.server, 'Local/caller-g@dial-test');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    const [result] = varsets(seen, call.two.name, 'RESULT');
    assert.match(result, /^ANSWER:Local\/callee-short@dial-test-[0-9a-f]{8};1:callee-short@dial-test$/);
    const destroyed = seen.find(isDestroyedOf(call.two))!;
    assert.equal(destroyed.cause, 16, 'hung up by Hangup() in the dialplan');
    assertNoChannels(pbx.server);
  });

  test('without g the caller is hung up with the called party’s cause', async () => {
    const call = originate(pbx.server, 'Local/caller-nog@dial-test');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.equal(seen.find(isDestroyedOf(call.two))!.cause, 21);
    assert.ok(!dialplanTrace(seen, call.two.name).some((step) => step.startsWith('NoOp')));
    assertNoChannels(pbx.server);
  });

  test('option b(): the pre-dial handler runs on the callee with its arguments before it is dialled; a missing one does not stop the call', async () => {
    const call = originate(pbx.server, 'Local/caller-predial@dial-test');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    const dials = dialEvents(seen);
    const peer = dials[0].peer as string;
    assert.deepEqual(varsets(seen, peer, 'SEEN'), [`7-eight:${peer}`]);
    const handlerAt = seen.findIndex((event) => event.type === 'ChannelVarset' && event.variable === 'SEEN');
    const dialAt = seen.findIndex((event) => event.type === 'Dial' && event.caller !== undefined);
    assert.ok(handlerAt >= 0 && handlerAt < dialAt, 'the handler ran before the Dial event');
    assert.deepEqual(varsets(seen, call.two.name, 'RESULT'), ['BUSY']);
    const missing = originate(pbx.server, 'Local/caller-predial-missing@dial-test');
    const seenMissing = await untilDestroyed(events, [missing.one, missing.two]);
    assert.deepEqual(varsets(seenMissing, missing.two.name, 'RESULT'), ['BUSY']);
    assertNoChannels(pbx.server);
  });

  test('Dial to Busy() → DIALSTATUS BUSY; Congestion() → CONGESTION', async () => {
    for (const [exten, status, cause] of [
      ['caller-busy', 'BUSY', 17],
      ['caller-congested', 'CONGESTION', 34],
    ] as const) {
      const call = originate(pbx.server, `Local/${exten}@dial-test`);
      const seen = await untilDestroyed(events, [call.one, call.two]);
      assert.deepEqual(varsets(seen, call.two.name, 'DIALSTATUS'), ['', status]); // blanked as Dial() starts (app_dial)
      assert.deepEqual(varsets(seen, call.two.name, 'RESULT'), [status]);
      const dials = dialEvents(seen);
      assert.deepEqual(
        dials.map((dial) => dial.dialstatus),
        ['', status],
      );
      const peerDestroyed = seen.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === dials[0].peer)!;
      assert.equal(peerDestroyed.cause, cause);
      assertNoChannels(pbx.server);
    }
  });

  test('Hangup() after a failed Dial keeps the callee\'s cause (busy 17, congestion 34); a Dial timeout leaves normal clearing', async () => {
    for (const [exten, cause] of [
      ['caller-busy', 17],
      ['caller-congested', 34],
      ['caller-timeout', 16],
    ] as const) {
      const call = originate(pbx.server, `Local/${exten}@dial-test`);
      const seen = await untilDestroyed(events, [call.one, call.two]);
      const callerDestroyed = seen.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === call.two.name)!;
      assert.equal(callerDestroyed.cause, cause, exten);
      assertNoChannels(pbx.server);
    }
  });

  test('Dial timeout → NOANSWER, with the callee’s ringing passed on to the caller', async () => {
    const started = Date.now();
    const call = originate(pbx.server, 'Local/caller-timeout@dial-test');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.ok(Date.now() - started >= 280, 'waited for the timeout');
    assert.deepEqual(varsets(seen, call.two.name, 'RESULT'), ['NOANSWER']);
    assert.deepEqual(
      dialEvents(seen).map((dial) => dial.dialstatus),
      ['', 'NOANSWER'],
    );
    const ringingStates = seen.filter((event) => event.type === 'ChannelStateChange' && channelOf(event).state === 'Ringing').map(channelName);
    assert.ok(ringingStates.includes(call.one.name), 'the originator hears the callee ringing through the caller');
    assertNoChannels(pbx.server);
  });

  test('the caller hanging up while dialing cancels the call', async () => {
    const call = originate(pbx.server, 'Local/caller-forever@dial-test');
    const ringingSeen = await collectUntil(events, (event) => event.type === 'Dial' && event.caller !== undefined);
    const peer = pbx.server.core.channels.get(String((ringingSeen.at(-1)!.peer as Record<string, unknown>).name))!;
    await collectUntil(events, (event) => event.type === 'ChannelStateChange' && channelName(event) === call.one.name && channelOf(event).state === 'Ringing');
    call.one.hangup();
    const seen = await untilDestroyed(events, [call.one, call.two, peer, peer.peer!]);
    assert.deepEqual(
      dialEvents(seen).map((dial) => dial.dialstatus),
      ['CANCEL'],
    );
    assertNoChannels(pbx.server);
  });

  test('several destinations: the first to answer wins, the others are cancelled or fail', async () => {
    const call = originate(pbx.server, 'Local/caller-multi@dial-test');
    const setup = await collectUntilAll(events, [echoRunning, dialStatusSet]);
    assert.equal(await call.status, 'ANSWER');
    const byPeer = new Map<string, string[]>();
    // Keyed by the callee's Local name: app_dial's outcomes carry no dialstring (captured against Asterisk 22).
    const destination = (peer: string): string => peer.replace(/^Local\//, '').replace(/-[0-9a-f]{8};1$/, '');
    for (const dial of dialEvents(setup)) {
      const key = destination(dial.peer);
      byPeer.set(key, [...(byPeer.get(key) ?? []), dial.dialstatus]);
    }
    // The busy leg may not have finished failing yet; read on until the ringing leg is cancelled.
    const rest = byPeer.get('ringing@dial-test')?.includes('CANCEL')
      ? []
      : await collectUntil(events, (event) => event.type === 'Dial' && destination(String((event.peer as Record<string, unknown>).name)) === 'ringing@dial-test' && event.dialstatus !== '');
    for (const dial of dialEvents(rest)) byPeer.set(destination(dial.peer), [...(byPeer.get(destination(dial.peer)) ?? []), dial.dialstatus]);
    assert.deepEqual(byPeer.get('callee-slow@dial-test'), ['', 'ANSWER']);
    assert.deepEqual(byPeer.get('ringing@dial-test'), ['', 'CANCEL']);
    assert.deepEqual(byPeer.get('busy@dial-test'), ['', 'BUSY']);
    const cancelled = [...setup, ...rest].find((event) => event.type === 'ChannelHangupRequest' && channelName(event).startsWith('Local/ringing@dial-test') && channelName(event).endsWith(';1'));
    assert.equal(cancelled?.cause, 26, 'answered elsewhere');
    const survivors = pbx.server.core.channels.list();
    call.one.hangup();
    await untilDestroyed(events, survivors);
    assertNoChannels(pbx.server);
  });

  test('every destination busy or congested → BUSY; an unknown technology → CHANUNAVAIL', async () => {
    for (const [exten, status] of [
      ['caller-mixed', 'BUSY'],
      ['caller-bad', 'CHANUNAVAIL'],
    ] as const) {
      const call = originate(pbx.server, `Local/${exten}@dial-test`);
      const seen = await untilDestroyed(events, [call.one, call.two]);
      assert.deepEqual(varsets(seen, call.two.name, 'RESULT'), [status]);
      assertNoChannels(pbx.server);
    }
  });
});

describe('indications towards an originator', () => {
  before(async () => {
    events = await watchAll(pbx.server, 'pbx-watch-2');
  });
  after(() => events.close());

  test('originating to a Local channel that runs Busy() ends BUSY; Congestion() ends CONGESTION', async () => {
    for (const [exten, status, cause] of [
      ['busy', 'BUSY', 17],
      ['congested', 'CONGESTION', 34],
    ] as const) {
      const call = originate(pbx.server, `Local/${exten}@dial-test`);
      assert.equal(await call.status, status);
      const seen = await untilDestroyed(events, [call.one, call.two]);
      assert.equal(seen.find(isDestroyedOf(call.one))!.cause, cause);
      assert.equal(seen.find(isDestroyedOf(call.two))!.cause, cause);
      const twoStates = seen.filter((event) => event.type === 'ChannelStateChange' && channelName(event) === call.two.name).map((event) => channelOf(event).state);
      assert.deepEqual(twoStates, ['Busy']);
      const dial = seen.filter((event) => event.type === 'Dial' && channelName({ type: '', channel: event.peer }) === call.one.name);
      assert.deepEqual(
        dial.map((event) => event.dialstatus),
        ['', status],
      );
      assertNoChannels(pbx.server);
    }
  });

  test('Ringing() makes the originated channel Ringing; Progress() reaches it as progress', async () => {
    const ringingCall = originate(pbx.server, 'Local/ringing@dial-test');
    await collectUntil(events, (event) => event.type === 'ChannelStateChange' && channelName(event) === ringingCall.one.name && channelOf(event).state === 'Ringing');
    ringingCall.one.hangup();
    await untilDestroyed(events, [ringingCall.one, ringingCall.two]);
    assert.equal(await ringingCall.status, 'CANCEL');

    const progressCall = originate(pbx.server, 'Local/progress@dial-test');
    const indication = await new Promise<string>((resolve) => progressCall.one.once('remote-indication', resolve));
    assert.equal(indication, 'progress');
    assert.equal(progressCall.one.state, 'Down');
    progressCall.one.hangup();
    await untilDestroyed(events, [progressCall.one, progressCall.two]);
    assertNoChannels(pbx.server);
  });
});

describe('through ARI (POST /channels, DELETE /channels/{id})', () => {
  let app: EventSocket;
  before(async () => {
    app = await pbx.server.events('app=pbx-ari&subscribeAll=true');
  });
  after(() => app.close());

  test('originating Local/busy@… into an app ends BUSY: the channel is destroyed with cause 17 and never enters the app', async () => {
    const response = await pbx.server.ari('/channels?endpoint=Local/busy@dial-test&app=pbx-ari', { method: 'POST' });
    assert.equal(response.status, 200);
    const channel = (await response.json()) as { id: string; name: string };
    const halves = new Set([channel.name, channel.name.replace(/;1$/, ';2')]);
    const seen = await collectUntil(app, (event) => event.type === 'ChannelDestroyed' && halves.delete(channelName(event)) && halves.size === 0);
    const destroyed = seen.find((event) => event.type === 'ChannelDestroyed' && channelOf(event).id === channel.id)!;
    assert.equal(destroyed.cause, 17);
    assert.equal(destroyed.cause_txt, 'User busy');
    const dial = seen.filter((event) => event.type === 'Dial' && (event.peer as Record<string, unknown>).id === channel.id);
    assert.deepEqual(
      dial.map((event) => event.dialstatus),
      ['', 'BUSY'],
    );
    assert.ok(!seen.some((event) => event.type === 'StasisStart'));
    assertNoChannels(pbx.server);
  });

  test('originating Local/caller@… whose dialplan Dials an answering callee: StasisStart once answered, DELETE ends all four', async () => {
    const response = await pbx.server.ari('/channels?endpoint=Local/caller@dial-test&app=pbx-ari&appArgs=a,b', { method: 'POST' });
    assert.equal(response.status, 200);
    const channel = (await response.json()) as { id: string; name: string };
    const setup = await collectUntil(app, (event) => event.type === 'StasisStart');
    assert.deepEqual(setup.at(-1)!.args, ['a', 'b']);
    assert.equal(channelOf(setup.at(-1)!).id, channel.id);
    const dials = dialEvents(setup);
    assert.deepEqual(
      dials.map((dial) => [dial.caller, dial.dialstring, dial.dialstatus]),
      [
        [channel.name.replace(/;1$/, ';2'), 'callee-echo@dial-test', ''],
        [channel.name.replace(/;1$/, ';2'), '', 'ANSWER'],
      ],
    );
    const everyone = pbx.server.core.channels.list();
    assert.equal(everyone.length, 4);
    assert.equal((await pbx.server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
    await untilDestroyed(app, everyone);
    assertNoChannels(pbx.server);
  });
});
