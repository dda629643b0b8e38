// `patchbay events --app X`: a channel seen in Stasis(X) stays followed after its application
// returns (its snapshot then shows the app it ran before, AppDial2 for an originated channel), up
// to its ChannelDestroyed; the followed set is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppEventFilter } from '../../src/cli/output.ts';

const inStasis = (id: string, app: string) => ({ id, dialplan: { app_name: 'Stasis', app_data: app } });
const after = (id: string) => ({ id, dialplan: { app_name: 'AppDial2', app_data: '(Outgoing Line)' } });

test('a channel seen in Stasis(app) is followed until it is destroyed', () => {
  const filter = new AppEventFilter('watched');
  assert.equal(filter.concerns({ type: 'ChannelStateChange', channel: after('c1') }), false, 'not yet seen in the application');
  assert.equal(filter.concerns({ type: 'ChannelVarset', channel: inStasis('c1', 'watched') }), true);
  assert.equal(filter.concerns({ type: 'ChannelVarset', channel: inStasis('c2', 'other') }), false);
  assert.equal(filter.concerns({ type: 'ChannelHangupRequest', channel: after('c1') }), true, 'followed after the app returned');
  assert.equal(filter.concerns({ type: 'ChannelDestroyed', channel: after('c1') }), true);
  assert.equal(filter.concerns({ type: 'ChannelVarset', channel: after('c1') }), false, 'forgotten once destroyed');
});

test('hostile events: no channel, odd shapes, and a flood of channels stay bounded', () => {
  const filter = new AppEventFilter('watched');
  assert.equal(filter.concerns({ type: 'ChannelDestroyed' }), false);
  assert.equal(filter.concerns({ type: 'X', channel: 'not an object' }), false);
  assert.equal(filter.concerns({ type: 'X', channel: { id: 7, dialplan: null } }), false);
  for (let i = 0; i < 20_000; i++) filter.concerns({ type: 'ChannelVarset', channel: inStasis(`f${i}`, 'watched') });
  assert.equal(filter.concerns({ type: 'ChannelDestroyed', channel: after('f0') }), false, 'the oldest was forgotten past the bound');
  assert.equal(filter.concerns({ type: 'ChannelDestroyed', channel: after('f19999') }), true);
});
