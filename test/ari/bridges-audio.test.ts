// Audio through bridges, measured: two Local calls in a mixing bridge carry a 1 kHz tone from one
// party to the other at its frequency and level, and silence when it stops; the party that sends
// hears nothing of itself (mix-minus). Holding-bridge roles, member mute and DTMF absorption are
// checked on the audio and digits that really arrive.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { AUDIO_BY_TICKS, cleanUpAfterFailureInCluster, unlessCluster } from '../helpers/cluster-server.ts';
import type { TestServer } from '../helpers/server.ts';
import { capture, EventLog, expectStatus, finish, isEvent, localCall, measure, appServerInSuite, ticks, toneWriter } from './bridges-helpers.ts';

const APP = 'bridge-audio';

let server: TestServer;

// Through a cluster, a failed test's channels on A and C would fail every later leak check too.
afterEach((t) => cleanUpAfterFailureInCluster(server, t));
let log: EventLog;

appServerInSuite(APP, (started) => ({ server, log } = started));

describe('a mixing bridge of two Local calls', () => {
  test('a 1 kHz tone written into call A is heard by call B at its frequency and level, then silence; A hears nothing of itself', unlessCluster(AUDIO_BY_TICKS), async () => {
    const bridge = await expectStatus(server, '/bridges?type=mixing&bridgeId=headline', 200);
    assert.equal(bridge.bridge_type, 'mixing');
    const a = await localCall(server, log, APP, 'head-a');
    const b = await localCall(server, log, APP, 'head-b');
    await expectStatus(server, `/bridges/headline/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    assert.deepEqual(server.core.bridges.get('headline')?.channelIds().sort(), [a.one.id, b.one.id].sort());

    // B's far end (the ;2 half) receives what the bridge writes to B; likewise for A.
    const heardByB = capture(server, b.two);
    const heardByA = capture(server, a.two);
    // The party of call A speaks: frames written into A;2 travel to A;1, which is in the bridge.
    const tone = toneWriter(server, (frame) => a.two.write(frame), 1000, 8000);
    await ticks(server, 50);
    tone.stop();
    const toneEnd = tone.lastTick;
    await ticks(server, 25);
    heardByB.stop();
    heardByA.stop();

    // One frame per tick reaches B all along (silence frames included): the bridge runs on the clock.
    const ticksSeen = new Set(heardByB.frames.map((frame) => frame.tick));
    assert.ok(ticksSeen.size >= 70, `B received a frame on ${ticksSeen.size} ticks`);

    // The tone, a tick later (the bridge mixes what arrived on the previous tick); skip 2 ticks of set-up.
    const during = heardByB.between(tone.firstTick + 3, toneEnd);
    assert.ok(during.length >= 160 * 40, `tone frames at B: ${during.length / 160}`);
    const heard = measure(during, 1000);
    assert.ok(Math.abs(heard.amplitude - 8000) < 8000 * 0.03, `1 kHz amplitude at B ${heard.amplitude.toFixed(0)} (sent 8000)`);
    assert.ok(heard.purity > 0.97, `1 kHz carries ${(heard.purity * 100).toFixed(1)}% of the power`);
    assert.ok(Math.abs(heard.frequency - 1000) < 10, `zero-crossing frequency ${heard.frequency.toFixed(1)} Hz`);
    const other = measure(during, 1500);
    assert.ok(other.amplitude < 80, `nothing at 1.5 kHz (${other.amplitude.toFixed(0)})`);

    // After the tone stops, B hears digital silence, still one frame per tick.
    const afterwards = heardByB.between(toneEnd + 2, toneEnd + 20);
    assert.ok(afterwards.length >= 160 * 15, `silence frames at B: ${afterwards.length / 160}`);
    assert.ok(measure(afterwards, 1000).rms < 1, `silence after the tone (rms ${measure(afterwards, 1000).rms})`);

    // Mix-minus: A hears the bridge too, but not its own tone.
    const atA = heardByA.between(tone.firstTick + 3, toneEnd);
    assert.ok(atA.length >= 160 * 40, 'A receives frames from the bridge');
    assert.ok(measure(atA, 1000).rms < 1, `A does not hear itself (rms ${measure(atA, 1000).rms})`);

    await finish(server, [a, b], ['headline']);
  });

  test('two parties talk at once: each hears only the other', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/duplex', 200);
    const a = await localCall(server, log, APP, 'duplex-a');
    const b = await localCall(server, log, APP, 'duplex-b');
    await expectStatus(server, `/bridges/duplex/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const heardByA = capture(server, a.two);
    const heardByB = capture(server, b.two);
    const toneA = toneWriter(server, (frame) => a.two.write(frame), 600, 5000);
    const toneB = toneWriter(server, (frame) => b.two.write(frame), 1400, 7000);
    await ticks(server, 30);
    toneA.stop();
    toneB.stop();
    const from = Math.max(toneA.firstTick, toneB.firstTick) + 3;
    const to = Math.min(toneA.lastTick, toneB.lastTick);
    const atA = heardByA.between(from, to);
    const atB = heardByB.between(from, to);
    assert.ok(Math.abs(measure(atA, 1400).amplitude - 7000) < 210, `A hears B's 1.4 kHz at ${measure(atA, 1400).amplitude.toFixed(0)}`);
    assert.ok(measure(atA, 600).amplitude < 50, 'A does not hear its own 600 Hz');
    assert.ok(Math.abs(measure(atB, 600).amplitude - 5000) < 150, `B hears A's 600 Hz at ${measure(atB, 600).amplitude.toFixed(0)}`);
    assert.ok(measure(atB, 1400).amplitude < 50, 'B does not hear its own 1.4 kHz');
    heardByA.stop();
    heardByB.stop();
    await finish(server, [a, b], ['duplex']);
  });
});

describe('holding bridge roles', () => {
  test('a participant hears the announcer and music on hold, never another participant; the announcer hears no one', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/hold?type=holding', 200);
    const p1 = await localCall(server, log, APP, 'hold-p1');
    const p2 = await localCall(server, log, APP, 'hold-p2');
    const ann = await localCall(server, log, APP, 'hold-ann');
    await expectStatus(server, `/bridges/hold/addChannel?channel=${p1.one.id},${p2.one.id}&role=participant`, 204);
    await expectStatus(server, `/bridges/hold/addChannel?channel=${ann.one.id}&role=announcer`, 204);
    assert.deepEqual(server.core.bridges.get('hold')?.roles(ann.one), ['announcer']);

    const atP1 = capture(server, p1.two);
    const atAnnouncer = capture(server, ann.two);
    const participantTone = toneWriter(server, (frame) => p2.two.write(frame), 1000, 8000);
    const announcerTone = toneWriter(server, (frame) => ann.two.write(frame), 600, 6000);
    await ticks(server, 30);
    const from = Math.max(participantTone.firstTick, announcerTone.firstTick) + 3;
    const to = server.core.media.clock.ticks - 1;
    const heard = atP1.between(from, to);
    assert.ok(Math.abs(measure(heard, 600).amplitude - 6000) < 180, `participant hears the announcer (${measure(heard, 600).amplitude.toFixed(0)})`);
    assert.ok(measure(heard, 1000).amplitude < 40, `participant does not hear the other participant (${measure(heard, 1000).amplitude.toFixed(0)})`);
    assert.equal(atAnnouncer.between(from, to).length, 0, 'nothing is written to the announcer');
    announcerTone.stop();

    // Music on hold into the bridge: the participant hears music (energy), still not the other participant.
    await expectStatus(server, '/bridges/hold/moh', 204);
    await ticks(server, 5);
    const mohFrom = server.core.media.clock.ticks;
    await ticks(server, 50);
    const music = atP1.between(mohFrom, mohFrom + 49);
    assert.ok(measure(music, 1000).rms > 300, `music energy at the participant (rms ${measure(music, 1000).rms.toFixed(0)})`);
    assert.ok(measure(music, 1000).amplitude < 200, 'the other participant is still not heard under the music');
    await expectStatus(server, '/bridges/hold/moh', 204, 'DELETE');
    participantTone.stop();
    await ticks(server, 3);
    const quietFrom = server.core.media.clock.ticks;
    await ticks(server, 10);
    assert.ok(measure(atP1.between(quietFrom, quietFrom + 9), 1000).rms < 1, 'silence once the music stops');
    atP1.stop();
    atAnnouncer.stop();
    await finish(server, [p1, p2, ann], ['hold']);
  });
});

describe('holding bridge idle audio', () => {
  test('participants hear music on hold while no announcer is in the bridge, and not once one joins', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/idle?type=holding', 200);
    const p1 = await localCall(server, log, APP, 'idle-p1');
    const ann = await localCall(server, log, APP, 'idle-ann');
    await expectStatus(server, `/bridges/idle/addChannel?channel=${p1.one.id}&role=participant`, 204);
    const atP1 = capture(server, p1.two);
    await ticks(server, 5);
    const idleFrom = server.core.media.clock.ticks;
    await ticks(server, 50);
    assert.ok(measure(atP1.between(idleFrom, idleFrom + 49), 1000).rms > 300, 'music while nobody announces');
    await expectStatus(server, `/bridges/idle/addChannel?channel=${ann.one.id}&role=announcer`, 204);
    await ticks(server, 3);
    const quietFrom = server.core.media.clock.ticks;
    await ticks(server, 10);
    assert.ok(measure(atP1.between(quietFrom, quietFrom + 9), 1000).rms < 1, 'no music once an announcer is in the bridge');
    atP1.stop();
    await finish(server, [p1, ann], ['idle']);
  });
});

describe('member options', () => {
  test('mute: a muted member is not heard; adding it again unmuted lets it through; a bridge created muted mutes its members', unlessCluster(AUDIO_BY_TICKS), async () => {
    await expectStatus(server, '/bridges/mute', 200);
    const a = await localCall(server, log, APP, 'mute-a');
    const b = await localCall(server, log, APP, 'mute-b');
    await expectStatus(server, `/bridges/mute/addChannel?channel=${a.one.id}&mute=true`, 204);
    await expectStatus(server, `/bridges/mute/addChannel?channel=${b.one.id}`, 204);
    const atB = capture(server, b.two);
    const tone = toneWriter(server, (frame) => a.two.write(frame), 1000, 8000);
    await ticks(server, 20);
    const mutedFrom = tone.firstTick + 3;
    const mutedTo = server.core.media.clock.ticks - 1;
    assert.ok(measure(atB.between(mutedFrom, mutedTo), 1000).rms < 1, 'a muted member is not heard');
    await expectStatus(server, `/bridges/mute/addChannel?channel=${a.one.id}&mute=false`, 204);
    await ticks(server, 3);
    const openFrom = server.core.media.clock.ticks;
    await ticks(server, 20);
    assert.ok(measure(atB.between(openFrom, openFrom + 19), 1000).amplitude > 7500, 'heard once unmuted');
    tone.stop();
    atB.stop();

    const muted = await expectStatus(server, '/bridges/muted-room?mute=true', 200);
    assert.equal(muted.id, 'muted-room');
    await expectStatus(server, `/bridges/muted-room/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const atB2 = capture(server, b.two);
    const tone2 = toneWriter(server, (frame) => a.two.write(frame), 1000, 8000);
    await ticks(server, 20);
    assert.ok(measure(atB2.between(tone2.firstTick + 3, server.core.media.clock.ticks - 1), 1000).rms < 1, 'members of a muted bridge are muted');
    tone2.stop();
    atB2.stop();
    await finish(server, [a, b], ['mute', 'muted-room']);
  });

  test('absorbDTMF: digits from an absorbing member stay out of the bridge (and are still received by it)', async () => {
    await expectStatus(server, '/bridges/dtmf', 200);
    const a = await localCall(server, log, APP, 'dtmf-a');
    const b = await localCall(server, log, APP, 'dtmf-b');
    await expectStatus(server, `/bridges/dtmf/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    // The party of A presses 5: A;2 sends it to A;1, the bridge passes it to B, whose far end is B;2.
    let mark = log.mark();
    a.two.driver.sendDigit('5', 100);
    const passed = await log.waitFor('digit at B;2', isEvent('ChannelDtmfReceived', b.two.id), mark);
    assert.equal(passed.digit, '5');

    await expectStatus(server, `/bridges/dtmf/addChannel?channel=${a.one.id}&absorbDTMF=true`, 204);
    mark = log.mark();
    a.two.driver.sendDigit('7', 100);
    const received = await log.waitFor('digit at A;1', isEvent('ChannelDtmfReceived', a.one.id), mark);
    assert.equal(received.digit, '7');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(log.since(mark).filter(isEvent('ChannelDtmfReceived', b.two.id)).length, 0, 'absorbed: B hears no digit');
    await finish(server, [a, b], ['dtmf']);
  });

  test('inhibitConnectedLineUpdates: two parties get each other as connected line unless inhibited', async () => {
    await expectStatus(server, '/bridges/colp', 200);
    const a = await localCall(server, log, APP, 'colp-a', { callerId: '"Alice" <100>' });
    const b = await localCall(server, log, APP, 'colp-b', { callerId: '"Bob" <200>' });
    let mark = log.mark();
    await expectStatus(server, `/bridges/colp/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const atA = await log.waitFor('connected line of A', isEvent('ChannelConnectedLine', a.one.id), mark);
    const atB = await log.waitFor('connected line of B', isEvent('ChannelConnectedLine', b.one.id), mark);
    assert.deepEqual(atA.channel.connected, { name: 'Bob', number: '200' });
    assert.deepEqual(atB.channel.connected, { name: 'Alice', number: '100' });
    // Raised after both have entered.
    const entered = log.since(mark).filter((event) => event.type === 'ChannelEnteredBridge').length;
    assert.equal(entered, 2);
    await finish(server, [a, b], ['colp']);

    await expectStatus(server, '/bridges/nocolp', 200);
    const c = await localCall(server, log, APP, 'colp-c', { callerId: '"Carol" <300>' });
    const d = await localCall(server, log, APP, 'colp-d', { callerId: '"Dave" <400>' });
    mark = log.mark();
    await expectStatus(server, `/bridges/nocolp/addChannel?channel=${c.one.id},${d.one.id}&inhibitConnectedLineUpdates=true`, 204);
    await log.waitFor('entered', isEvent('ChannelEnteredBridge', d.one.id), mark);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(log.since(mark).filter((event) => event.type === 'ChannelConnectedLine').length, 0, 'no connected-line updates');
    assert.notDeepEqual(server.channel(c.one.id)?.connected, { name: 'Dave', number: '400' });
    await finish(server, [c, d], ['nocolp']);
  });
});
