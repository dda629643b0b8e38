// A typical voice application written with the real npm `ari-client`: answer an incoming call,
// play a prompt on it (client-generated playback id, as ari-client does), record it, then put two
// calls in a mixing bridge with a bridge playback, and tear everything down.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import ari, { type Client } from 'ari-client';
import { internals } from '../helpers/ari-client.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const APP = 'ivr';
type AriEvent = Record<string, any>;

let server: TestServer;
let client: Client;
let waiters: { match: (event: AriEvent, instance: any) => boolean; resolve: (value: [AriEvent, any]) => void }[] = [];

before(async () => {
  server = await startTestServer();
  client = await ari.connect(server.url, 'asterisk', 'asterisk');
  (client as unknown as NodeJS.EventEmitter).on('*', (event: AriEvent, instance: any) => {
    const waiter = waiters.find((candidate) => candidate.match(event, instance));
    if (waiter) {
      waiters = waiters.filter((candidate) => candidate !== waiter);
      waiter.resolve([event, instance]);
    }
  });
  await client.start(APP);
});

after(async () => {
  client?.stop();
  if (client) internals(client)._ws?.terminate();
  await server?.stop();
});

function next(type: string, match: (event: AriEvent) => boolean = () => true, ms = 5000): Promise<[AriEvent, any]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${type}`)), ms);
    waiters.push({
      match: (event) => event.type === type && match(event),
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
    });
  });
}

async function call(): Promise<any> {
  const started = next('StasisStart');
  const channel = client.Channel();
  await channel.originate({ endpoint: 'Local/answer@default', app: APP, appArgs: 'incoming' });
  const [event, instance] = await started;
  assert.deepEqual(event.args, ['incoming']);
  return instance;
}

test('answer, play a prompt with a client-made playback id, record, hang up', async () => {
  const channel = await call();
  await channel.answer();

  const playback = client.Playback();
  const finished = next('PlaybackFinished', (event) => event.playback.id === playback.id);
  const started = next('PlaybackStarted', (event) => event.playback.id === playback.id);
  await channel.play({ media: 'sound:beep' }, playback);
  const [startedEvent] = await started;
  assert.equal(startedEvent.playback.target_uri, `channel:${channel.id}`);
  const [finishedEvent] = await finished;
  assert.equal(finishedEvent.playback.state, 'complete');

  const recordingStarted = next('RecordingStarted');
  const live = await channel.record({ name: 'ivr/message', format: 'wav', maxDurationSeconds: 1, beep: false });
  assert.equal(live.name, 'ivr/message');
  await recordingStarted;
  const [done] = await next('RecordingFinished', () => true, 4000);
  assert.equal(done.recording.state, 'done');
  assert.equal(done.recording.duration, 1);
  assert.equal(done.recording.total_duration, 1);

  const stored = await client.recordings.getStored({ recordingName: 'ivr/message' });
  assert.equal(stored.format, 'wav');
  const file = join(server.config.dirs.recordings, 'ivr', 'message.wav');
  assert.ok(existsSync(file));
  const wav = readWavFile(file);
  assert.equal(wav.rate, 8000);
  assert.ok(Math.abs(wav.samples.length - 8000) <= 160, `one second of audio, got ${wav.samples.length} samples`);

  const ended = next('StasisEnd', (event) => event.channel.id === channel.id);
  await channel.hangup();
  await ended;
});

test('a conference: two calls in a mixing bridge, a bridge announcement, then destroy', async () => {
  const first = await call();
  const second = await call();
  const bridge = client.Bridge();
  await bridge.create({ type: 'mixing' });
  const entered = next('ChannelEnteredBridge', (event) => event.channel.id === second.id);
  await bridge.addChannel({ channel: [first.id, second.id].join(',') });
  const [enteredEvent] = await entered;
  assert.deepEqual(new Set(enteredEvent.bridge.channels), new Set([first.id, second.id]));

  const announcement = client.Playback();
  const played = next('PlaybackFinished', (event) => event.playback.id === announcement.id);
  // ari-client takes a Playback instance in place of the callback (its id is chosen up front); the typings know only the callback.
  await (bridge as unknown as { play(params: object, playback: unknown): Promise<unknown> }).play({ media: 'sound:beep' }, announcement);
  const [playedEvent] = await played;
  assert.equal(playedEvent.playback.target_uri, `bridge:${bridge.id}`);

  const listed = await client.bridges.get({ bridgeId: bridge.id });
  assert.equal(listed.bridge_type, 'mixing');
  await bridge.removeChannel({ channel: first.id });
  await bridge.destroy();
  await first.hangup();
  await second.hangup();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(server.allChannels().length, 0);
  assert.equal(server.core.bridges.size, 0);
});
