// The leg messages of bridges across cluster members against hostile input: every field checked,
// a bad message is a sentence (answered 400), never an exception; and the legs' settings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeLegMessage, decodeLegReply, encodeLeg, readSnapshot } from '../../src/cluster/media-leg-wire.ts';
import { legMediaAddress } from '../../src/cluster/media-leg.ts';
import { loadConfig } from '../../src/config/config.ts';

const bytes = (value: unknown): Uint8Array => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const open = { op: 'open', leg: 'f1e2-33', channel: 'chan-1', peer: 'nodeB', address: '10.0.0.5', port: 12000 };

describe('cluster leg messages', () => {
  it('reads well-formed messages back as they were sent', () => {
    assert.deepEqual(decodeLegMessage(bytes(open)), open);
    assert.deepEqual(decodeLegReply(encodeLeg({ status: 204 })), { status: 204 });
    const add = { op: 'add', bridge: 'q', channels: [{ id: 'x', node: 'nodeA' }], roles: ['announcer'], mute: true };
    assert.deepEqual(decodeLegMessage(bytes(add)), add);
    assert.deepEqual(decodeLegMessage(bytes({ op: 'remove', bridge: 'q', channels: [{ id: 'x', node: 'nodeA' }] })), { op: 'remove', bridge: 'q', channels: [{ id: 'x', node: 'nodeA' }] });
    assert.deepEqual(decodeLegMessage(bytes({ op: 'close', leg: 'abc' })), { op: 'close', leg: 'abc' });
    assert.deepEqual(decodeLegMessage(bytes({ op: 'hold', leg: 'abc' })), { op: 'hold', leg: 'abc' });
    assert.deepEqual(decodeLegMessage(bytes({ op: 'connected', leg: 'abc', name: 'Bob', number: '200' })), { op: 'connected', leg: 'abc', name: 'Bob', number: '200' });
    assert.deepEqual(decodeLegMessage(bytes({ op: 'digit', leg: 'abc', digit: '#', durationMs: 100 })), { op: 'digit', leg: 'abc', digit: '#', durationMs: 100 });
  });

  it('refuses hostile messages with a reason', () => {
    const bad: unknown[] = [
      '{not json',
      'null',
      '[1,2]',
      { op: 'launch' },
      { ...open, leg: '../x' },
      { ...open, leg: 'x'.repeat(65) },
      { ...open, channel: '' },
      { ...open, channel: 'c'.repeat(150) },
      { ...open, peer: 'a.b' },
      { ...open, address: 'example.com' },
      { ...open, address: '10.0.0.5; rm -rf' },
      { ...open, port: 0 },
      { ...open, port: 65536 },
      { ...open, port: 1.5 },
      { ...open, port: '12000' },
      { op: 'close', leg: 'abc', snapshot: 'x' },
      { op: 'add', bridge: 'q', channels: [], roles: [] },
      { op: 'add', bridge: 'q', channels: Array.from({ length: 65 }, (_, i) => ({ id: `c${i}`, node: 'n' })), roles: [] },
      { op: 'add', bridge: 'q', channels: [{ id: 'x' }], roles: [] },
      { op: 'add', bridge: 'q', channels: [{ id: 'x', node: 'n' }], roles: ['a', 'b'] },
      { op: 'add', bridge: 'q', channels: [{ id: 'x', node: 'n' }], roles: [], mute: 'yes' },
      { op: 'remove', bridge: 'q', channels: ['x'] },
      { op: 'digit', leg: 'abc', digit: '77', durationMs: 100 },
      { op: 'digit', leg: 'abc', digit: 'x', durationMs: 100 },
      { op: 'digit', leg: 'abc', digit: '7', durationMs: 10_001 },
      { op: 'digit', leg: 'abc', digit: '7' },
      { op: 'unhold', leg: 7 },
      { op: 'connected', leg: 'abc', name: 'n'.repeat(257), number: '1' },
      { op: 'connected', leg: 'abc', name: 'n' },
    ];
    for (const message of bad) assert.equal(typeof decodeLegMessage(bytes(message)), 'string', JSON.stringify(message));
    assert.equal(typeof decodeLegMessage(Buffer.alloc(70 * 1024, 0x20)), 'string');
  });

  it('checks replies and snapshots', () => {
    assert.deepEqual(decodeLegReply(bytes({ status: 200, address: '127.0.0.1', port: 4000, app: 'a', snapshot: { id: 'x', name: 'n' } })), { status: 200, address: '127.0.0.1', port: 4000, app: 'a', snapshot: { id: 'x', name: 'n' } });
    for (const reply of ['garbage', { status: 'ok' }, { status: 700 }, { status: 200, address: 'host' }, { status: 200, port: -1 }, { status: 200, message: 7 }, { status: 200, snapshot: [] }]) {
      assert.equal(decodeLegReply(bytes(reply)).status, 502, JSON.stringify(reply));
    }
    assert.deepEqual(readSnapshot({ id: 'x', name: 'Local/a' }, 'x'), { id: 'x', name: 'Local/a' });
    assert.equal(readSnapshot({ id: 'y', name: 'Local/a' }, 'x'), 'bad');
    assert.equal(readSnapshot({ id: 'x', name: 'n', big: 'b'.repeat(40_000) }, 'x'), 'bad');
    assert.equal(readSnapshot(undefined, 'x'), undefined);
  });
});

describe('bridge leg settings', () => {
  const load = (cluster: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    loadConfig({ path: null, env: {}, overrides: { dirs: { data: '/tmp/patchbay-cluster-settings' }, server_id: '02:00:00:00:00:01', cluster, ...more } });

  it('default to 200 legs on the SIP address', () => {
    const config = load({});
    assert.equal(config.cluster.maxMediaLegs, 200);
    assert.equal(config.cluster.mediaAddress, '');
    assert.equal(legMediaAddress(load({}, { sip: { bind: '10.9.8.7' } })), '10.9.8.7');
    assert.equal(legMediaAddress(load({}, { sip: { bind: 'localhost' } })), '127.0.0.1');
    assert.equal(legMediaAddress(load({ media_address: '192.0.2.10' }, { sip: { bind: '10.9.8.7' } })), '192.0.2.10');
  });

  it('are checked', () => {
    assert.throws(() => load({ media_address: 'pbx.example.com' }), /media_address/);
    assert.throws(() => load({ max_media_legs: -1 }), /max_media_legs/);
    assert.equal(load({ max_media_legs: 0 }).cluster.maxMediaLegs, 0);
  });
});
