// A bridge recording follows the bridge's own members, whether or not this server's channel table
// holds them: a cluster member's stand-in for another member's channel is in no table, and its DTMF
// must end a recording made with terminateOn and its application hear the recording's end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BridgeSource } from '../../src/core/recordings/sources.ts';
import { kernel, unitBridge, unitChannel } from './kernel-helpers.ts';

test("a bridge recording hears the DTMF of a member this server's table does not hold, and counts its application", () => {
  const here = kernel();
  const bridge = unitBridge(here, { id: 'recorded', name: '', type: 'mixing', videoMode: 'none' });
  const local = unitChannel(here, { state: 'Up' }).channel;
  // Held by another table (another member's, as the in-process cluster of the ARI tests has it; a
  // leg's stand-in is in none at all).
  const elsewhere = kernel().channels.create({ id: 'far-channel', name: 'Unit/far', technology: 'Unit', direction: 'outbound', state: 'Up' });
  elsewhere.stasis = { app: 'far-app', args: [] };
  assert.equal(here.channels.get(elsewhere.id), undefined);
  bridge.add(local);
  bridge.add(elsewhere);

  const digits: string[] = [];
  const source = new BridgeSource(bridge, true);
  source.attach({ frame: () => undefined, dtmf: (digit) => digits.push(digit), ended: () => undefined });
  source.tick();
  elsewhere.receiveDigit('#', 100);
  local.receiveDigit('1', 100);
  assert.deepEqual(digits, ['#', '1']);
  assert.deepEqual(source.scope.applications, ['far-app']);

  // A member that leaves is no longer listened to.
  bridge.remove(elsewhere);
  source.tick();
  elsewhere.receiveDigit('#', 100);
  assert.deepEqual(digits, ['#', '1']);
  source.detach();
});
