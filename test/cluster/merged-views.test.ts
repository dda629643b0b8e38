// The views combined from every member's answer (src/cluster/merged-views.ts): endpoints merged
// (online anywhere, channel ids of all), technology device states aggregated as Asterisk does,
// shared device states never asked of others, and members' answers that are malformed ignored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { combinerFor } from '../../src/cluster/merged-views.ts';
import type { ClusterAriResponse } from '../../src/cluster/wire.ts';

const ok = (json: unknown): ClusterAriResponse => ({ status: 200, headers: {}, json });
const endpoint = (state: string, channelIds: unknown): Record<string, unknown> => ({ technology: 'PJSIP', resource: 'alice', state, channel_ids: channelIds });

describe('views combined from every cluster member', () => {
  it('an endpoint is online when online anywhere, with the channels of every member', () => {
    const combine = combinerFor('endpoints.get', { tech: 'PJSIP', resource: 'alice' })!;
    const merged = combine(ok(endpoint('offline', [])), [ok(endpoint('online', ['a-1'])), undefined, ok(endpoint('offline', ['c-1', 'a-1']))]);
    assert.deepEqual(merged.json, { technology: 'PJSIP', resource: 'alice', state: 'online', channel_ids: ['a-1', 'c-1'] });
    // Not found here but on another member: that member's answer.
    const elsewhere = combine({ status: 404, headers: {}, json: { message: 'Endpoint not found' } }, [ok(endpoint('online', []))]);
    assert.equal(elsewhere.status, 200);
    assert.equal(combine({ status: 404, headers: {}, json: {} }, [undefined]).status, 404);
  });

  it('listings merge one entry per endpoint; malformed answers and items are left out', () => {
    const combine = combinerFor('endpoints.list', {})!;
    const merged = combine(ok([endpoint('offline', []), { technology: 'Local', resource: 'x', state: 'online', channel_ids: [] }]), [
      ok([endpoint('online', ['b-1', 7, { evil: true }]), null, 'text', [1]]),
      ok({ not: 'an array' }),
      { status: 500, headers: {}, json: [endpoint('online', ['never'])] },
      ok([endpoint('offline', 'not an array')]),
    ]);
    assert.deepEqual(merged.json, [
      { technology: 'PJSIP', resource: 'alice', state: 'online', channel_ids: ['b-1'] },
      { technology: 'Local', resource: 'x', state: 'online', channel_ids: [] },
    ]);
    // An error here is the answer (as a single server would give it).
    assert.equal(combine({ status: 400, headers: {}, json: { message: 'bad' } }, [ok([])]).status, 400);
  });

  it('a technology device state aggregates the members by Asterisk\'s rules', () => {
    const combine = combinerFor('deviceStates.get', { deviceName: 'PJSIP/alice' })!;
    const state = (...states: string[]): unknown => combine(ok({ name: 'PJSIP/alice', state: states[0] }), states.slice(1).map((s) => ok({ name: 'PJSIP/alice', state: s }))).json;
    assert.deepEqual(state('NOT_INUSE', 'INUSE'), { name: 'PJSIP/alice', state: 'INUSE' });
    assert.deepEqual(state('UNAVAILABLE', 'NOT_INUSE'), { name: 'PJSIP/alice', state: 'NOT_INUSE' });
    assert.deepEqual(state('RINGING', 'INUSE'), { name: 'PJSIP/alice', state: 'RINGINUSE' });
    assert.deepEqual(state('UNKNOWN', 'UNKNOWN'), { name: 'PJSIP/alice', state: 'UNKNOWN' });
    assert.deepEqual(state('UNKNOWN', 'UNAVAILABLE'), { name: 'PJSIP/alice', state: 'UNAVAILABLE' });
    assert.deepEqual(state('NOT_INUSE', 'EXPLODED', 'BUSY;rm -rf'), { name: 'PJSIP/alice', state: 'NOT_INUSE' }, 'unknown states are ignored');
  });

  it('shared device states are answered here, never asked of every member', () => {
    assert.equal(combinerFor('deviceStates.get', { deviceName: 'Stasis:desk' }), undefined);
    assert.equal(combinerFor('deviceStates.get', { deviceName: 'Custom:lamp' }), undefined);
    assert.equal(combinerFor('channels.get', { channelId: 'x' }), undefined);
  });
});
