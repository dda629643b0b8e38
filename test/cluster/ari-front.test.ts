// A slice of the ARI suite through member B of a three-member cluster whose calls live on A and C
// (the cluster mode of startTestServer: B is an ARI front, `place_on_self: false`, round robin):
// originates through B land on A and C in turn, with and without a chosen id; an application that
// originates the moment its WebSocket opens gets its StasisStart; channel requests, variables and
// playbacks of those channels act through B; a subscription made through B to a channel of A that
// is not in Stasis brings its events (its ChannelDestroyed); a recording made on C is fetched, copied and deleted through B.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { type Json, NO_NATS } from './cluster-fixture.ts';

const APP = 'front';

const skip = NO_NATS;

/** The next event satisfying `match`, skipping others (generous: a loaded machine, events crossing NATS). */
async function nextEvent(events: EventSocket, match: (event: Json) => boolean, timeoutMs = 15_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

describe('the ARI through a cluster front whose calls live on other members', { skip }, () => {
  let server: TestServer;
  let events: EventSocket;
  /** Which member (a, b, c) holds a channel now. */
  const holder = (id: string): string | undefined => {
    const members = server.clusterMembers!;
    return (['a', 'b', 'c'] as const).find((name) => members[name].core.channels.get(id) !== undefined);
  };

  before(async () => {
    server = await startTestServer({}, { cluster: true, clusterSharedRecordings: false });
    // The very first thing after the connection opens is an originate placed on another member:
    // the home exists before the WebSocket is accepted, and the member the call is placed on finds it.
    events = await server.events(`app=${APP}`);
  });

  after(async () => {
    await events?.close();
    await server?.stop();
  });

  it('places originates round robin on A and C, with or without a chosen id, and their events reach B', async () => {
    const placed: string[] = [];
    for (const id of ['rr-1', 'rr-2', 'rr-3', 'rr-4']) {
      // Half with a chosen id in the query, half with the id in the path.
      const path = id.endsWith('1') || id.endsWith('3') ? `/channels?channelId=${id}&` : `/channels/${id}?`;
      const response = await server.ari(`${path}endpoint=Local/answer@default&app=${APP}&otherChannelId=${id}-2`, { method: 'POST' });
      assert.equal(response.status, 200, await response.clone().text());
      // Asked at once: the owner answers (its subscription precedes its reply to the originate).
      assert.equal((await server.ari(`/channels/${id}`)).status, 200);
      const start = await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === id);
      assert.notEqual(start.asterisk_id, server.config.serverId, 'raised by the member holding the channel');
      placed.push(holder(id) ?? 'none');
    }
    assert.deepEqual(placed.slice().sort(), ['a', 'a', 'c', 'c']);
    assert.notEqual(placed[0], placed[1]);
    // An id in use on another member is answered by that member, as a single server does.
    const again = await server.ari(`/channels?channelId=rr-1&endpoint=Local/answer@default&app=${APP}`, { method: 'POST' });
    assert.equal(again.status, 409, await again.clone().text());
    // Unnamed ones too.
    const unnamed = (await (await server.ari(`/channels?endpoint=Local/answer@default&app=${APP}`, { method: 'POST' })).json()) as Json;
    assert.ok(['a', 'c'].includes(holder(unnamed.id) ?? ''));
    // A generated id names its member, so A's and C's never coincide.
    assert.match(unnamed.id, new RegExp(`^${holder(unnamed.id)}-\\d+\\.\\d+$`));
    for (const id of ['rr-1', 'rr-2', 'rr-3', 'rr-4', unnamed.id]) assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  });

  it('sets and reads variables, and plays back, on a channel of another member', async () => {
    assert.equal((await server.ari(`/channels?channelId=pv&endpoint=Local/answer@default&app=${APP}&otherChannelId=pv-2`, { method: 'POST' })).status, 200);
    await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === 'pv');
    assert.notEqual(holder('pv'), 'b');
    assert.equal((await server.ari('/channels/pv/answer', { method: 'POST' })).status, 204);
    assert.equal((await server.ari('/channels/pv/variable?variable=COLOUR&value=blue', { method: 'POST' })).status, 204);
    assert.deepEqual(await (await server.ari('/channels/pv/variable?variable=COLOUR')).json(), { value: 'blue' });
    const play = await server.ari('/channels/pv/play/pb-1?media=tone:440;tonedetect=no', { method: 'POST' });
    assert.equal(play.status, 201, await play.clone().text());
    await nextEvent(events, (event) => event.type === 'PlaybackStarted' && event.playback?.id === 'pb-1');
    assert.equal((await server.ari('/playbacks/pb-1')).status, 200);
    assert.equal((await server.ari('/playbacks/pb-1', { method: 'DELETE' })).status, 204);
    await nextEvent(events, (event) => event.type === 'PlaybackFinished' && event.playback?.id === 'pb-1');
    assert.equal((await server.ari('/channels/pv', { method: 'DELETE' })).status, 204);
  });

  it('lists remote channels in the application, raises user events and stops playbacks through their owner, refuses an otherChannelId in use', async () => {
    assert.equal((await server.ari(`/channels?channelId=ux&endpoint=Local/answer@default&app=${APP}&otherChannelId=ux-2&cluster_node=a`, { method: 'POST' })).status, 200);
    await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === 'ux');
    const application = (await (await server.ari(`/applications/${APP}`)).json()) as Json;
    assert.ok(application.channel_ids.includes('ux'), JSON.stringify(application));
    const listed = ((await (await server.ari('/applications')).json()) as Json[]).filter((item) => item.name === APP);
    assert.equal(listed.length, 1);
    assert.ok(listed[0]!.channel_ids.includes('ux'));
    const user = await server.ari(`/events/user/doorbell?application=${APP}&source=channel:ux`, { method: 'POST' });
    assert.equal(user.status, 204, await user.clone().text());
    await nextEvent(events, (event) => event.type === 'ChannelUserevent' && event.eventname === 'doorbell' && event.channel?.id === 'ux');
    // otherChannelId alone, in use on A: A answers 409 (a new channel placed on C would not know).
    const clash = await server.ari(`/channels?endpoint=Local/answer@default&app=${APP}&otherChannelId=ux-2`, { method: 'POST' });
    assert.equal(clash.status, 409, await clash.clone().text());
    assert.equal((await server.ari('/channels/ux/answer', { method: 'POST' })).status, 204);
    assert.equal((await server.ari('/channels/ux/play/pb-alias?media=tone:440', { method: 'POST' })).status, 201);
    await nextEvent(events, (event) => event.type === 'PlaybackStarted' && event.playback?.id === 'pb-alias');
    assert.equal((await server.ari('/playback/pb-alias', { method: 'DELETE' })).status, 204, 'the /playback alias reaches the owner');
    await nextEvent(events, (event) => event.type === 'PlaybackFinished' && event.playback?.id === 'pb-alias');
    assert.equal((await server.ari('/channels/ux', { method: 'DELETE' })).status, 204);
  });

  it('subscribes to every channel on every member, and makes a channel on its originator\'s member', async () => {
    assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=channel:`, { method: 'POST' })).status, 200);
    assert.equal((await server.ari('/channels?channelId=all-c&endpoint=Local/answer@default&extension=answer&context=default&cluster_node=c', { method: 'POST' })).status, 200);
    await nextEvent(events, (event) => event.type === 'ChannelCreated' && event.channel?.id === 'all-c');
    assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=channel:`, { method: 'DELETE' })).status, 200);
    const made = await server.ari(`/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=linked&originator=all-c`, { method: 'POST' });
    assert.equal(made.status, 200, await made.clone().text());
    assert.equal(holder('linked'), 'c', 'made beside its originator');
    // An originator nobody holds: originate refuses it (400) wherever it is placed, as a single server.
    assert.equal((await server.ari(`/channels?endpoint=Local/answer@default&app=${APP}&originator=ghost`, { method: 'POST' })).status, 400);
    for (const id of ['linked', 'all-c']) assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  });

  it("subscribes the application through B to a channel of A that is not in Stasis, and unsubscribes", async () => {
    // A channel running dialplan only (no app): placed with cluster_node on A.
    const made = await server.ari('/channels?channelId=watched&endpoint=Local/answer@default&extension=answer&context=default&cluster_node=a', { method: 'POST' });
    assert.equal(made.status, 200, await made.clone().text());
    assert.equal(holder('watched'), 'a');
    const subscribed = await server.ari(`/applications/${APP}/subscription?eventSource=channel:watched`, { method: 'POST' });
    assert.equal(subscribed.status, 200, await subscribed.clone().text());
    assert.ok(((await subscribed.json()) as Json).channel_ids.includes('watched'));
    const unsubscribed = await server.ari(`/applications/${APP}/subscription?eventSource=channel:watched`, { method: 'DELETE' });
    assert.equal(unsubscribed.status, 200, await unsubscribed.clone().text());
    assert.ok(!((await unsubscribed.json()) as Json).channel_ids.includes('watched'));
    // Not subscribed any more: the owner's 422, as a single server's.
    assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=channel:watched`, { method: 'DELETE' })).status, 422);
    // Nobody holds it: 422 from the home, as a single server.
    assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=channel:nobody`, { method: 'POST' })).status, 422);
    assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=channel:watched`, { method: 'POST' })).status, 200);
    assert.equal((await server.ari('/channels/watched', { method: 'DELETE' })).status, 204);
    await nextEvent(events, (event) => event.type === 'ChannelDestroyed' && event.channel?.id === 'watched');
  });

  it('fetches, copies and deletes through B a recording stored on C', async () => {
    assert.equal((await server.ari(`/channels?channelId=rec&endpoint=Local/answer@default&app=${APP}&cluster_node=c`, { method: 'POST' })).status, 200);
    await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === 'rec');
    assert.equal((await server.ari('/channels/rec/answer', { method: 'POST' })).status, 204);
    const record = await server.ari('/channels/rec/record?name=on-c&format=wav&ifExists=overwrite', { method: 'POST' });
    assert.equal(record.status, 201, await record.clone().text());
    await nextEvent(events, (event) => event.type === 'RecordingStarted' && event.recording?.name === 'on-c');
    assert.equal((await server.ari('/recordings/live/on-c')).status, 200);
    assert.equal((await server.ari('/recordings/live/on-c/stop', { method: 'POST' })).status, 204);
    await nextEvent(events, (event) => event.type === 'RecordingFinished' && event.recording?.name === 'on-c');
    assert.deepEqual(await (await server.ari('/recordings/stored/on-c')).json(), { name: 'on-c', format: 'wav' });
    const file = await server.ari('/recordings/stored/on-c/file');
    assert.equal(file.status, 200);
    assert.equal(Buffer.from(await file.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
    assert.equal((await server.ari('/recordings/stored/on-c/copy?destinationRecordingName=copied', { method: 'POST' })).status, 200);
    const names = ((await (await server.ari('/recordings/stored')).json()) as Json[]).map((item) => item.name).sort();
    assert.deepEqual(names, ['copied', 'on-c']);
    assert.equal((await server.ari('/recordings/stored/on-c', { method: 'DELETE' })).status, 204);
    assert.equal((await server.ari('/recordings/stored/copied', { method: 'DELETE' })).status, 204);
    assert.equal((await server.ari('/recordings/stored/on-c')).status, 404);
    assert.equal((await server.ari('/channels/rec', { method: 'DELETE' })).status, 204);
  });
});
