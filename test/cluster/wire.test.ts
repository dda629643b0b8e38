// The messages members exchange are checked before use: anything malformed is refused with a
// reason (answered 400 by the owner), never a throw; ids of any kind become valid subject tokens.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { resourceOf } from '../../src/cluster/forwarder.ts';
import { decodeRequest, decodeResponse, encodeRequest, subjectToken } from '../../src/cluster/wire.ts';
import { DEFAULT_USER } from '../../src/config/ari-users.ts';

describe('cluster wire format', () => {
  it('carries a request there and back', () => {
    const data = encodeRequest({ method: 'POST', path: '/channels/x/play', query: new URLSearchParams('media=sound:hello'), body: Buffer.from('{}'), contentType: 'application/json', user: DEFAULT_USER, transport: 'http' }, { kind: 'channel', id: 'x' });
    const wire = decodeRequest(data);
    assert.ok(typeof wire !== 'string');
    assert.equal(wire.method, 'POST');
    assert.equal(wire.query, 'media=sound%3Ahello');
    assert.equal(Buffer.from(wire.body!, 'base64').toString(), '{}');
    assert.deepEqual(wire.owned, { kind: 'channel', id: 'x' });
  });

  it('refuses hostile requests with a reason', () => {
    const bad = (value: unknown): string | object => decodeRequest(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
    assert.equal(bad('not json{'), 'not JSON');
    assert.equal(bad(null), 'not an object');
    assert.equal(bad({ method: 'get', path: '/x', query: '', user: 'u', transport: 'http' }), 'bad method');
    assert.equal(bad({ method: 'GET', path: 'x', query: '', user: 'u', transport: 'http' }), 'bad path');
    assert.equal(bad({ method: 'GET', path: '/x', query: 'q'.repeat(10_000), user: 'u', transport: 'http' }), 'bad query');
    assert.equal(bad({ method: 'GET', path: '/x', query: '', user: '', transport: 'http' }), 'bad user');
    assert.equal(bad({ method: 'GET', path: '/x', query: '', user: 'u', transport: 'smoke' }), 'bad transport');
    assert.equal(bad({ method: 'GET', path: '/x', query: '', user: 'u', transport: 'http', owned: { kind: 'moon', id: 'x' } }), 'bad owned');
  });

  it('turns a malformed answer into 502 and drops bad headers', () => {
    assert.equal(decodeResponse(Buffer.from('{')).status, 502);
    assert.equal(decodeResponse(Buffer.from('{"status": 99}')).status, 502);
    const answer = decodeResponse(Buffer.from(JSON.stringify({ status: 200, headers: { Good: 'yes', 'Bad\r\nName': 'x', Split: 'a\r\nb' }, json: [1] })));
    assert.deepEqual(answer.headers, { Good: 'yes' });
    assert.deepEqual(answer.json, [1]);
  });

  it('makes a subject token of any id', () => {
    assert.equal(subjectToken('abc-1_2'), 'abc-1_2');
    assert.equal(subjectToken('a.b*c>d e'), 'a=2e=b=2a=c=3e=d=20=e');
    assert.equal(subjectToken(''), '=');
  });

  it('finds the resource a request names', () => {
    assert.deepEqual(resourceOf('/channels/x/play', { channelId: 'x' }), { kind: 'channel', id: 'x' });
    assert.deepEqual(resourceOf('/bridges/b/play/p', { bridgeId: 'b', playbackId: 'p' }), { kind: 'bridge', id: 'b' });
    assert.deepEqual(resourceOf('/recordings/live/r/stop', { recordingName: 'r' }), { kind: 'recording', id: 'r' });
    assert.equal(resourceOf('/recordings/stored/r', { recordingName: 'r' }), undefined);
    assert.equal(resourceOf('/channels', {}), undefined);
  });
});

describe('cluster settings', () => {
  const load = (cluster: Record<string, unknown>) => loadConfig({ path: null, env: {}, overrides: { dirs: { data: '/tmp/patchbay-cluster-settings' }, server_id: '02:00:00:00:00:01', cluster } });

  it('are off by default', () => {
    const config = load({});
    assert.equal(config.cluster.natsUrl, '');
    assert.equal(config.cluster.failureSeconds, 5);
    assert.equal(config.cluster.name, 'patchbay');
  });

  it('check URLs and names', () => {
    assert.equal(load({ nats_url: 'nats://127.0.0.1:4222, tls://n2:4223' }).cluster.natsUrl, 'nats://127.0.0.1:4222, tls://n2:4223');
    assert.throws(() => load({ nats_url: 'http://x' }), /nats_url/);
    assert.throws(() => load({ node_id: 'a.b' }), /node_id/);
    assert.throws(() => load({ name: 'with space' }), /name/);
    assert.throws(() => load({ failure_seconds: 1 }), /failure_seconds/);
  });

  it('place channels by least load on any member by default; round robin and a front on request', () => {
    assert.equal(load({}).cluster.placement, 'least_loaded');
    assert.equal(load({}).cluster.placeOnSelf, true);
    const front = load({ placement: 'round_robin', place_on_self: false }).cluster;
    assert.equal(front.placement, 'round_robin');
    assert.equal(front.placeOnSelf, false);
    assert.throws(() => load({ placement: 'random' }), /placement/);
    assert.throws(() => load({ place_on_self: 'no' }), /place_on_self/);
  });
});
