// What the two members of a bridge leg tell each other about the bridge and the channel
// (src/cluster/leg-events.ts): the messages against hostile input, and the ChannelLeftBridge the
// channel's member raises from its copy of the bridge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leftBridgeEvent } from '../../src/cluster/leg-events.ts';
import { decodeLegMessage, MAX_BRIDGE_APPS } from '../../src/cluster/media-leg-wire.ts';
import type { Model } from '../../src/spec/index.ts';

const bytes = (value: unknown): Uint8Array => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const bridge = { id: 'q', technology: 'simple_bridge', bridge_type: 'mixing', bridge_class: 'stasis', creator: 'Stasis', name: '', channels: ['x', 'y'], video_mode: 'talker', creationtime: '2026-01-01T00:00:00.000+0000' };
const described = { op: 'bridge', leg: 'l-1', bridge, apps: ['ivr', 'other'] };

describe('cluster leg descriptions of the bridge and the channel', () => {
  it('reads well-formed messages back as they were sent', () => {
    assert.deepEqual(decodeLegMessage(bytes(described)), described);
    const snapshot = { op: 'snapshot', leg: 'l-1', snapshot: { id: 'x', name: 'Local/a@b-1;1' } };
    assert.deepEqual(decodeLegMessage(bytes(snapshot)), snapshot);
    assert.deepEqual(decodeLegMessage(bytes({ op: 'close', leg: 'l-1', announced: true })), { op: 'close', leg: 'l-1', announced: true });
    assert.deepEqual(decodeLegMessage(bytes({ op: 'close', leg: 'l-1', announced: false })), { op: 'close', leg: 'l-1' });
    const told = { op: 'close', leg: 'l-1', announced: true, announcedTo: ['ivr', 'queue'] };
    assert.deepEqual(decodeLegMessage(bytes(told)), told);
    const open = { op: 'open', leg: 'l-1', channel: 'x', peer: 'nodeB', address: '10.0.0.5', port: 12000, bridge: 'q', described: { bridge, apps: ['ivr'] } };
    assert.deepEqual(decodeLegMessage(bytes(open)), open);
  });

  it('refuses hostile ones with a reason', () => {
    const bad: unknown[] = [
      { ...described, leg: '../x' },
      { ...described, bridge: null },
      { ...described, bridge: [] },
      { ...described, bridge: { ...bridge, id: '' } },
      { ...described, bridge: { ...bridge, id: 'b'.repeat(200) } },
      { ...described, bridge: { ...bridge, channels: 'x' } },
      { ...described, bridge: { ...bridge, channels: [1] } },
      { ...described, bridge: { ...bridge, channels: Array.from({ length: 1025 }, (_, n) => `c${n}`) } },
      { ...described, bridge: { ...bridge, name: 'n'.repeat(40_000) } },
      { ...described, apps: 'ivr' },
      { ...described, apps: [''] },
      { ...described, apps: [7] },
      { ...described, apps: ['a'.repeat(257)] },
      { ...described, apps: Array.from({ length: MAX_BRIDGE_APPS + 1 }, (_, n) => `app${n}`) },
      { op: 'snapshot', leg: 'l-1' },
      { op: 'snapshot', leg: 'l-1', snapshot: [] },
      { op: 'close', leg: 'l-1', announced: 'yes' },
      { op: 'close', leg: 'l-1', announced: true, announcedTo: 'ivr' },
      { op: 'close', leg: 'l-1', announced: true, announcedTo: [''] },
      { op: 'close', leg: 'l-1', announced: true, announcedTo: Array.from({ length: MAX_BRIDGE_APPS + 1 }, (_, n) => `app${n}`) },
      { op: 'open', leg: 'l-1', channel: 'x', peer: 'nodeB', address: '10.0.0.5', port: 12000, described: null },
      { op: 'open', leg: 'l-1', channel: 'x', peer: 'nodeB', address: '10.0.0.5', port: 12000, described: { bridge } },
      { op: 'open', leg: 'l-1', channel: 'x', peer: 'nodeB', address: '10.0.0.5', port: 12000, described: { bridge: { id: 'q' }, apps: [] } },
    ];
    for (const message of bad) assert.equal(typeof decodeLegMessage(bytes(message)), 'string', JSON.stringify(message).slice(0, 120));
  });

  it('raises ChannelLeftBridge with the bridge as it is without the channel', () => {
    const channel = { id: 'x', snapshot: () => ({ id: 'x', name: 'Local/a@b-1;1' }) as Model<'Channel'> };
    const copy = { snapshot: { ...bridge, video_mode: 'single', video_source_id: 'x' } as Model<'Bridge'>, apps: ['ivr'] };
    const event = leftBridgeEvent(channel, copy);
    assert.equal(event.type, 'ChannelLeftBridge');
    assert.deepEqual(event.bridge.channels, ['y']);
    assert.equal(event.bridge.video_source_id, undefined, 'a source that leaves is forgotten');
    assert.equal(event.channel.id, 'x');
    const kept = leftBridgeEvent(channel, { snapshot: { ...bridge, video_source_id: 'y' } as Model<'Bridge'>, apps: [] });
    assert.equal(kept.bridge.video_source_id, 'y');
    assert.deepEqual(copy.snapshot.channels, ['x', 'y'], 'the copy itself unchanged');
  });
});
