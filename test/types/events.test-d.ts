// Type test, compiled by `tsc --noEmit` (the first step of `npm test`) and never run: the events
// the core raises are typed from the declarations in src/spec, so a misspelt event name, a
// misspelt or missing field, or a field of the wrong type does not compile. Each
// `@ts-expect-error` below fails the build if the line after it ever compiles.
import type { Applications } from '../../src/core/applications.ts';
import { Bridge } from '../../src/core/bridges/bridge.ts';
import { Channel } from '../../src/core/channels/channel.ts';
import type { ObjectDirectory } from '../../src/core/objects.ts';
import type { Playback } from '../../src/core/playback/playback.ts';
import type { LiveRecording } from '../../src/core/recordings/live-recording.ts';
import type { TypedEmitter } from '../../src/util/typed-emitter.ts';
import type { Model } from '../../src/spec/index.ts';
import type { CoreEvent, CoreEventOf } from '../../src/spec/events.ts';

declare const channel: Channel;
declare const bridge: Bridge;
declare const applications: Applications;
declare const objects: ObjectDirectory;
declare const playback: Playback;
declare const recording: LiveRecording;
declare const timestamp: string;

// raise() is protected: only a channel raises its own events, so they are checked from a subclass.
export abstract class ChannelEvents extends Channel {
  channelEvents(): void {
    this.raise('ChannelHold', { musicclass: 'default' });
    this.raise('ChannelHold');
    this.raise('ChannelDtmfReceived', { digit: '1', duration_ms: 100 });
    this.raise('ChannelVarset', { variable: 'A', value: '1' }, { channelIds: [channel.id] });

    // @ts-expect-error -- misspelt event name
    this.raise('ChannelHeld');
    // @ts-expect-error -- an event that carries no `channel` is not the channel's to raise
    this.raise('BridgeCreated');
    // @ts-expect-error -- misspelt field (musicclass)
    this.raise('ChannelHold', { musicClass: 'default' });
    // @ts-expect-error -- missing field (duration_ms)
    this.raise('ChannelDtmfReceived', { digit: '1' });
    // @ts-expect-error -- the fields are required when the event has required fields of its own
    this.raise('ChannelDtmfReceived');
    // @ts-expect-error -- wrong type (duration_ms is an int)
    this.raise('ChannelDtmfReceived', { digit: '1', duration_ms: '100' });
    // @ts-expect-error -- the channel fills `channel` itself
    this.raise('ChannelStateChange', { channel: channel.snapshot() });
    // @ts-expect-error -- a field an event without fields of its own does not declare
    this.raise('ChannelStateChange', { state: 'Up' });
  }
}

export abstract class BridgeEvents extends Bridge {
  bridgeEvents(): void {
    this.raise('BridgeVideoSourceChanged', { old_video_source_id: 'x' });
    this.raise('BridgeDestroyed');
    this.raise('ChannelLeftBridge', { channel: channel.snapshot() }, [channel.id]);

    // @ts-expect-error -- misspelt event name
    this.raise('BridgeDestoyed');
    // @ts-expect-error -- misspelt field
    this.raise('BridgeVideoSourceChanged', { old_video_source: 'x' });
    // @ts-expect-error -- ChannelLeftBridge needs its channel
    this.raise('ChannelLeftBridge', {}, [channel.id]);
  }
}

export function onlyTheOwnerRaises(): void {
  // @ts-expect-error -- another object tells the channel what happened through a verb instead
  channel.raise('ChannelHold');
  // @ts-expect-error -- the same for a bridge
  bridge.raise('BridgeDestroyed');
}

export function publishedEvents(): void {
  applications.publish({ type: 'DeviceStateChanged', timestamp, device_state: { name: 'Stasis:x', state: 'INUSE' } }, { deviceNames: ['Stasis:x'] });
  applications.sendTo('app', { type: 'StasisEnd', timestamp, channel: channel.snapshot() });

  // @ts-expect-error -- misspelt event name
  applications.publish({ type: 'DeviceStateChange', timestamp, device_state: { name: 'x', state: 'INUSE' } }, {});
  // @ts-expect-error -- a state the declaration does not allow
  applications.publish({ type: 'DeviceStateChanged', timestamp, device_state: { name: 'x', state: 'IN_USE' } }, {});
  // @ts-expect-error -- misspelt field (device_state)
  applications.publish({ type: 'DeviceStateChanged', timestamp, devicestate: { name: 'x', state: 'INUSE' } }, {});
  // @ts-expect-error -- missing timestamp
  applications.sendTo('app', { type: 'StasisEnd', channel: channel.snapshot() });
  // @ts-expect-error -- StasisStart needs its args
  applications.sendTo('app', { type: 'StasisStart', timestamp, channel: channel.snapshot() });

  const dial: CoreEventOf<'Dial'> = { type: 'Dial', timestamp, peer: channel.snapshot(), dialstatus: 'ANSWER' };
  // @ts-expect-error -- misspelt optional field, added later
  dial.dailstring = '100';
  const any: CoreEvent = dial;
  if (any.type === 'Dial') any.peer.id.toUpperCase();
}

export function snapshots(): void {
  const c: Model<'Channel'> = channel.snapshot();
  const b: Model<'Bridge'> = bridge.snapshot();
  const p: Model<'Playback'> = playback.snapshot();
  const r: Model<'LiveRecording'> = recording.toJson();
  const e: Model<'Endpoint'> | undefined = objects.snapshot('endpoint', 'PJSIP/alice');
  void [c, b, p, r, e];
  // @ts-expect-error -- snapshots carry the declared fields only
  void channel.snapshot().protocolId;
  // @ts-expect-error -- a bridge snapshot is not a channel snapshot
  const wrong: Model<'Channel'> | undefined = objects.snapshot('bridge', 'b');
  void wrong;
}

export function internalEvents(emitter: TypedEmitter<{ hangup: { cause: number } }>): void {
  channel.on('hangup', ({ cause }) => void cause);
  emitter.on('hangup', ({ cause }) => void cause);
  // @ts-expect-error -- internal event maps have no index signature: a misspelt name does not compile
  channel.on('hangedup', () => undefined);
  // @ts-expect-error -- nor does a wrong payload
  channel.emit('dtmf', { digit: '1' });
}

export function broadcastEvents(): void {
  const offer: CoreEventOf<'CallBroadcast'> = { type: 'CallBroadcast', timestamp, channel: channel.snapshot(), caller: '', called: '100' };
  const claimed: CoreEventOf<'CallClaimed'> = { type: 'CallClaimed', timestamp, channel: channel.snapshot(), winner_app: 'a' };
  applications.sendTo('a', offer);
  applications.sendTo('a', claimed);
  // @ts-expect-error -- misspelt field (winner_app)
  const misspelt: CoreEventOf<'CallClaimed'> = { type: 'CallClaimed', timestamp, channel: channel.snapshot(), winnerApp: 'a' };
  // @ts-expect-error -- missing field (winner_app is required)
  const missing: CoreEventOf<'CallClaimed'> = { type: 'CallClaimed', timestamp, channel: channel.snapshot() };
  // @ts-expect-error -- wrong type (called is a string)
  const wrongType: CoreEventOf<'CallBroadcast'> = { type: 'CallBroadcast', timestamp, channel: channel.snapshot(), called: 100 };
  void [misspelt, missing, wrongType];
}
