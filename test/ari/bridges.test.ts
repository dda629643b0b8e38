// The bridges resource: create / createWithId / 409 / list / get / destroy with BridgeCreated and
// BridgeDestroyed, type validation, membership events in order, the errors of addChannel and
// removeChannel, the video-source state machine and bridge variables.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { cleanUpAfterFailureInCluster } from '../helpers/cluster-server.ts';
import type { TestServer } from '../helpers/server.ts';
import { EventLog, expectStatus, finish, isEvent, localCall, appServerInSuite } from './bridges-helpers.ts';

const APP = 'bridges-app';
const DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}$/;

let server: TestServer;

// Through a cluster, a failed test's channels on A and C would fail every later leak check too.
afterEach((t) => cleanUpAfterFailureInCluster(server, t));
let log: EventLog;

appServerInSuite(APP, async (started) => {
  ({ server, log } = started);
  // Bridges made through ARI belong to no application: subscribe to all of them to see their life.
  await expectStatus(server, `/applications/${APP}/subscription?eventSource=bridge:`, 200);
});

describe('create, list, get, destroy', () => {
  test('create and createWithId answer the Bridge; BridgeCreated; list and get; 409 on an id in use; destroy raises BridgeDestroyed', async () => {
    const mark = log.mark();
    const created = await expectStatus(server, '/bridges?type=mixing&name=room%201&bridgeId=first', 200);
    assert.deepEqual(
      { ...created, creationtime: undefined },
      {
        id: 'first',
        technology: 'simple_bridge',
        bridge_type: 'mixing',
        bridge_class: 'stasis',
        creator: 'Stasis',
        name: 'room 1',
        channels: [],
        video_mode: 'talker',
        creationtime: undefined,
      },
    );
    assert.match(created.creationtime, DATE);
    const createdEvent = await log.waitFor('BridgeCreated', (event) => event.type === 'BridgeCreated' && event.bridge.id === 'first', mark);
    assert.equal(createdEvent.application, APP);
    assert.deepEqual(createdEvent.bridge, created);

    const second = await expectStatus(server, '/bridges/second?type=holding&name=lobby', 200, 'POST', { variables: { COLOUR: 'blue' } });
    assert.equal(second.id, 'second');
    assert.equal(second.bridge_type, 'holding');
    assert.equal(second.technology, 'holding_bridge');
    assert.equal(second.video_mode, 'none');
    assert.deepEqual(second.bridgevars, { COLOUR: 'blue' });

    const generated = await expectStatus(server, '/bridges', 200);
    assert.match(generated.id, /^[0-9a-f-]{36}$/);

    const conflict = await expectStatus(server, '/bridges/first', 409);
    assert.match(conflict.message, /already exists/);
    await expectStatus(server, '/bridges?bridgeId=second', 409);

    const listed: { id: string }[] = await expectStatus(server, '/bridges', 200, 'GET');
    assert.deepEqual(listed.map((bridge) => bridge.id).sort(), ['first', 'second', generated.id].sort());
    assert.deepEqual(await expectStatus(server, '/bridges/second', 200, 'GET'), second);
    assert.deepEqual(await expectStatus(server, '/bridges/nope', 404, 'GET'), { message: 'Bridge not found' });

    for (const id of ['first', 'second', generated.id]) {
      const before = log.mark();
      await expectStatus(server, `/bridges/${id}`, 204, 'DELETE');
      const destroyed = await log.waitFor('BridgeDestroyed', (event) => event.type === 'BridgeDestroyed' && event.bridge.id === id, before);
      assert.equal(destroyed.bridge.id, id);
    }
    await expectStatus(server, '/bridges/first', 404, 'DELETE');
    await finish(server, []);
  });

  test('bridge types: tokens validated, impossible sets refused, video_sfu is a mixing bridge in sfu mode', async () => {
    const unknown = await expectStatus(server, '/bridges?type=mixing,party', 400);
    assert.match(unknown.message, /type/);
    await expectStatus(server, '/bridges?type=mixing,holding', 400);
    await expectStatus(server, '/bridges?type=dtmf_events', 400);
    await expectStatus(server, '/bridges?type=video_sfu,video_single', 400);
    await expectStatus(server, '/bridges/bad?type=holding,video_sfu', 400);
    assert.equal(server.core.bridges.size, 0, 'nothing was created by the refused requests');

    const sfu = await expectStatus(server, '/bridges/sfu?type=video_sfu', 200);
    assert.equal(sfu.bridge_type, 'mixing');
    assert.equal(sfu.video_mode, 'sfu');
    const single = await expectStatus(server, '/bridges/single?type=mixing,video_single,dtmf_events,proxy_media', 200);
    assert.equal(single.bridge_type, 'mixing');
    assert.equal(single.video_mode, 'single');
    const holding = await expectStatus(server, '/bridges/holding', 200, 'POST', { type: 'holding,dtmf_events' });
    assert.equal(holding.bridge_type, 'holding');
    await finish(server, [], ['sfu', 'single', 'holding']);
  });
});

describe('membership', () => {
  test('ChannelEnteredBridge and ChannelLeftBridge, in order, with the bridge as it is after the change', async () => {
    await expectStatus(server, '/bridges/members', 200);
    const a = await localCall(server, log, APP, 'mem-a');
    const b = await localCall(server, log, APP, 'mem-b');
    let mark = log.mark();
    await expectStatus(server, `/bridges/members/addChannel?channel=${a.one.id},${b.one.id}`, 204);
    const entered = await log.waitFor('second entered', isEvent('ChannelEnteredBridge', b.one.id), mark);
    const first = log.since(mark).find(isEvent('ChannelEnteredBridge', a.one.id));
    assert.ok(first, 'A entered');
    assert.deepEqual(first.bridge.channels, [a.one.id]);
    assert.deepEqual(entered.bridge.channels, [a.one.id, b.one.id]);
    assert.equal(entered.channel.name, b.one.name);
    assert.equal(entered.application, APP);
    assert.ok(log.since(mark).indexOf(first) < log.since(mark).indexOf(entered));
    assert.equal(server.channel(a.one.id)?.bridgeId, 'members');

    mark = log.mark();
    await expectStatus(server, `/bridges/members/removeChannel?channel=${a.one.id}`, 204);
    const left = await log.waitFor('A left', isEvent('ChannelLeftBridge', a.one.id), mark);
    assert.deepEqual(left.bridge.channels, [b.one.id]);
    assert.equal(server.channel(a.one.id)?.bridgeId, undefined);

    // A member that hangs up leaves the bridge first, then its application.
    mark = log.mark();
    await expectStatus(server, `/channels/${b.one.id}`, 204, 'DELETE');
    await log.waitFor('B destroyed', isEvent('ChannelDestroyed', b.one.id), mark);
    const sequence = log
      .since(mark)
      .filter((event) => event.channel?.id === b.one.id)
      .map((event) => event.type)
      .filter((type) => ['ChannelHangupRequest', 'ChannelLeftBridge', 'StasisEnd', 'ChannelDestroyed'].includes(type));
    assert.deepEqual(sequence, ['ChannelHangupRequest', 'ChannelLeftBridge', 'StasisEnd', 'ChannelDestroyed']);
    assert.deepEqual((await expectStatus(server, '/bridges/members', 200, 'GET')).channels, []);

    // Moving to another bridge leaves the first one.
    await expectStatus(server, '/bridges/other', 200);
    mark = log.mark();
    await expectStatus(server, `/bridges/members/addChannel?channel=${a.one.id}`, 204);
    await log.waitFor('entered members', (event) => event.type === 'ChannelEnteredBridge' && event.bridge.id === 'members', mark);
    mark = log.mark();
    await expectStatus(server, `/bridges/other/addChannel?channel=${a.one.id}`, 204);
    await log.waitFor('entered other', (event) => event.type === 'ChannelEnteredBridge' && event.bridge.id === 'other', mark);
    const moves = log.since(mark).filter((event) => event.type === 'ChannelLeftBridge' || event.type === 'ChannelEnteredBridge');
    assert.deepEqual(
      moves.map((event) => `${event.type}:${event.bridge.id}`),
      ['ChannelLeftBridge:members', 'ChannelEnteredBridge:other'],
    );

    // Destroying a bridge lets its channels go (they stay up).
    mark = log.mark();
    await expectStatus(server, '/bridges/other', 204, 'DELETE');
    await log.waitFor('left on destroy', isEvent('ChannelLeftBridge', a.one.id), mark);
    assert.equal(a.one.hangingUp, false);
    await finish(server, [a], ['members']);
  });

  test('a channel that continues to the dialplan leaves the bridge before StasisEnd', async () => {
    await expectStatus(server, '/bridges/cont', 200);
    const a = await localCall(server, log, APP, 'cont-a');
    await expectStatus(server, `/bridges/cont/addChannel?channel=${a.one.id}`, 204);
    const mark = log.mark();
    await expectStatus(server, `/channels/${a.one.id}/continue?context=default&extension=answer`, 204);
    await log.waitFor('StasisEnd', isEvent('StasisEnd', a.one.id), mark);
    const types = log
      .since(mark)
      .filter((event) => event.channel?.id === a.one.id && (event.type === 'ChannelLeftBridge' || event.type === 'StasisEnd'))
      .map((event) => event.type);
    assert.deepEqual(types, ['ChannelLeftBridge', 'StasisEnd']);
    assert.deepEqual(server.core.bridges.get('cont')?.channelIds(), []);
    await finish(server, [a], ['cont']);
  });

  test('roles: given to every channel added, replaced on entering again, cleared without one', async () => {
    await expectStatus(server, '/bridges/roles?type=holding', 200);
    const a = await localCall(server, log, APP, 'role-a');
    const b = await localCall(server, log, APP, 'role-b');
    const bridge = server.core.bridges.get('roles');
    assert.ok(bridge);
    await expectStatus(server, `/bridges/roles/addChannel?channel=${a.one.id},${b.one.id}&role=announcer`, 204);
    assert.deepEqual(bridge.roles(a.one), ['announcer']);
    assert.deepEqual(bridge.roles(b.one), ['announcer']);
    await expectStatus(server, `/bridges/roles/addChannel?channel=${a.one.id}&role=participant`, 204);
    assert.deepEqual(bridge.roles(a.one), ['participant']);
    await expectStatus(server, `/bridges/roles/addChannel?channel=${b.one.id}`, 204);
    assert.deepEqual(bridge.roles(b.one), []);
    await finish(server, [a, b], ['roles']);
  });

  test('errors: no bridge 404, unknown channel 400, channel not in Stasis 422, not a member 422, empty list 400', async () => {
    await expectStatus(server, '/bridges/errs', 200);
    const a = await localCall(server, log, APP, 'err-a');
    assert.deepEqual(await expectStatus(server, `/bridges/nope/addChannel?channel=${a.one.id}`, 404), { message: 'Bridge not found' });
    assert.deepEqual(await expectStatus(server, `/bridges/errs/addChannel?channel=${a.one.id},ghost`, 400), { message: 'Channel not found' });
    assert.equal(server.core.bridges.get('errs')?.size, 0, 'nothing added when one channel is unknown');
    // The ;2 half runs the dialplan: it is not in any application.
    assert.deepEqual(await expectStatus(server, `/bridges/errs/addChannel?channel=${a.two.id}`, 422), { message: 'Channel not in Stasis application' });
    await expectStatus(server, '/bridges/errs/addChannel?channel=', 400);
    assert.deepEqual(await expectStatus(server, `/bridges/errs/removeChannel?channel=${a.one.id}`, 422), { message: 'Channel not in this bridge' });
    await expectStatus(server, '/bridges/errs/removeChannel?channel=ghost', 400);
    await expectStatus(server, `/bridges/nope/removeChannel?channel=${a.one.id}`, 404);
    // A channel recording on its own cannot join a bridge (409), as in Asterisk.
    await expectStatus(server, `/channels/${a.one.id}/record?name=errs-rec&format=wav`, 201);
    assert.deepEqual(await expectStatus(server, `/bridges/errs/addChannel?channel=${a.one.id}`, 409), { message: 'Channel is being recorded' });
    await expectStatus(server, '/recordings/live/errs-rec', 204, 'DELETE');
    await finish(server, [a], ['errs']);
  });
});

describe('video source', () => {
  test('talker → setVideoSource → single (locked) → another → clearVideoSource → talker, each with BridgeVideoSourceChanged', async () => {
    await expectStatus(server, '/bridges/video?type=video_sfu', 200);
    const a = await localCall(server, log, APP, 'vid-a');
    const b = await localCall(server, log, APP, 'vid-b');
    const c = await localCall(server, log, APP, 'vid-c');
    await expectStatus(server, `/bridges/video/addChannel?channel=${a.one.id},${b.one.id}`, 204);

    assert.deepEqual(await expectStatus(server, `/bridges/video/videoSource/${c.one.id}`, 422), { message: 'Channel not in bridge' });
    await expectStatus(server, '/bridges/video/videoSource/ghost', 404);
    await expectStatus(server, `/bridges/video/videoSource/${a.two.id}`, 409);
    await expectStatus(server, `/bridges/ghost/videoSource/${a.one.id}`, 404);

    let mark = log.mark();
    await expectStatus(server, `/bridges/video/videoSource/${a.one.id}`, 204);
    let changed = await log.waitFor('first source', isEvent('BridgeVideoSourceChanged'), mark);
    assert.equal(changed.bridge.video_mode, 'single');
    assert.equal(changed.bridge.video_source_id, a.one.id);
    assert.equal('old_video_source_id' in changed, false);

    mark = log.mark();
    await expectStatus(server, `/bridges/video/videoSource/${b.one.id}`, 204);
    changed = await log.waitFor('second source', isEvent('BridgeVideoSourceChanged'), mark);
    assert.equal(changed.bridge.video_mode, 'single');
    assert.equal(changed.bridge.video_source_id, b.one.id);
    assert.equal(changed.old_video_source_id, a.one.id);
    assert.equal((await expectStatus(server, '/bridges/video', 200, 'GET')).video_source_id, b.one.id);

    mark = log.mark();
    await expectStatus(server, '/bridges/video/videoSource', 204, 'DELETE');
    changed = await log.waitFor('cleared', isEvent('BridgeVideoSourceChanged'), mark);
    assert.equal(changed.bridge.video_mode, 'talker');
    assert.equal('video_source_id' in changed.bridge, false);
    assert.equal(changed.old_video_source_id, b.one.id);
    const got = await expectStatus(server, '/bridges/video', 200, 'GET');
    assert.equal(got.video_mode, 'talker');
    assert.equal(got.video_source_id, undefined);
    await expectStatus(server, '/bridges/ghost/videoSource', 404, 'DELETE');
    await finish(server, [a, b, c], ['video']);
  });
});

describe('bridge variables', () => {
  test('set, get, several at once, unset; 404 for an unknown variable or bridge; shown as bridgevars', async () => {
    await expectStatus(server, '/bridges/vars', 200, 'POST', { variables: { FIRST: '1' } });
    assert.deepEqual(await expectStatus(server, '/bridges/vars/variable?variable=FIRST', 200, 'GET'), { value: '1' });
    await expectStatus(server, '/bridges/vars/variable?variable=SECOND&value=two', 204);
    await expectStatus(server, '/bridges/vars/variables', 204, 'POST', { variables: { THIRD: '3', FOURTH: { value: '4', report_events: true } } });
    assert.deepEqual(await expectStatus(server, '/bridges/vars/variables?variables=FIRST,SECOND,THIRD,FOURTH', 200, 'GET'), {
      variables: { FIRST: '1', SECOND: 'two', THIRD: '3', FOURTH: '4' },
    });
    assert.deepEqual((await expectStatus(server, '/bridges/vars', 200, 'GET')).bridgevars, { FIRST: '1', SECOND: 'two', THIRD: '3', FOURTH: '4' });
    assert.deepEqual(await expectStatus(server, '/bridges/vars/variable?variable=NOPE', 404, 'GET'), { message: 'Provided variable was not found' });
    await expectStatus(server, '/bridges/vars/variables?variables=FIRST,NOPE', 404, 'GET');
    assert.deepEqual(await expectStatus(server, '/bridges/ghost/variable?variable=FIRST', 404, 'GET'), { message: 'Bridge Not Found' });
    await expectStatus(server, '/bridges/vars/variables', 400, 'POST', { variables: { BAD: 5 } });
    await expectStatus(server, '/bridges/vars/variables', 400, 'POST', {});
    // No value unsets.
    await expectStatus(server, '/bridges/vars/variable?variable=SECOND', 204);
    await expectStatus(server, '/bridges/vars/variable?variable=SECOND', 404, 'GET');
    await expectStatus(server, '/bridges/badvars', 400, 'POST', { variables: { BAD: [1] } });
    assert.equal(server.core.bridges.get('badvars'), undefined, 'bad variables create no bridge');
    await finish(server, [], ['vars']);
  });
});
