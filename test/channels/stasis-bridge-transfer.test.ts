// A blind transfer out of an application's bridge through the technology seam alone (no SIP): what a
// SIP REFER asks for with Asterisk's default transfer handling (docs/sip.md "Transfers (REFER)").
// A fake technology's far ends sit in a Stasis bridge; the technology asks the core to transfer one
// of them: a Local `;1` takes its seat (StasisStart with replace_channel), the transferer stays in the
// application out of the bridge, BridgeBlindTransfer names the transferee only in a two-party bridge.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelDriver, ChannelRequest } from '../../src/core/channels/technology.ts';
import { watchDialplanInSuite } from '../helpers/dialplan-server.ts';
import { SeamTechnology } from './seam-technology-helpers.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

class QuietFarEnd implements ChannelDriver {
  call(): void {}
  answer(): void {}
  hangup(): void {}
  indicate(): void {}
  sendDigit(): void {}
  writeFrame(): void {}
}

class DeskTechnology extends SeamTechnology {
  readonly name = 'DESK';
  readonly description = 'Desk phones for Stasis bridge transfer tests';
  readonly module = { name: 'chan_desk.so', description: 'Stasis transfer test driver' };

  request(request: ChannelRequest): Channel {
    return this.context!.channels.create({ name: this.nextName(request.resource), technology: this.name, direction: 'outbound', state: 'Down' }, () => new QuietFarEnd());
  }

  /** `resource` calls 100 (the application). */
  incoming(resource: string): Channel {
    const channel = this.context!.channels.create({ name: this.nextName(resource), technology: this.name, direction: 'inbound', state: 'Ring' }, () => new QuietFarEnd());
    this.context!.enterDialplan(channel, { context: 'phones', exten: '100', priority: 1 });
    return channel;
  }
}

const desk = new DeskTechnology();
const dialplan = ['[phones]', 'exten => 100,1,Stasis(desk)', 'exten => 260,1,Answer()', ' same => n,Wait(20)', ''].join('\n');
const watched = watchDialplanInSuite(dialplan, 'app=desk&subscribeAll=true', { technologies: [desk] });

const nextEvent = (match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> => watched.events.nextMatching(match, timeoutMs);

const post = (path: string) => watched.server.ari(path, { method: 'POST' });

/** Far ends in the application, in a new mixing bridge; its id. */
async function bridged(...names: string[]): Promise<{ bridgeId: string; channels: Channel[] }> {
  const bridge = (await (await post('/bridges?type=mixing')).json()) as Json;
  const channels: Channel[] = [];
  for (const name of names) {
    const channel = desk.incoming(name);
    await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === channel.id);
    assert.equal((await post(`/bridges/${bridge.id}/addChannel?channel=${channel.id}`)).status, 204);
    channels.push(channel);
  }
  return { bridgeId: String(bridge.id), channels };
}

describe('a blind transfer out of a Stasis bridge (Asterisk\'s default REFER handling), through the technology seam', () => {
  test('two parties: a Local ;1 takes the seat, the transferer stays in the application, BridgeBlindTransfer names all', async () => {
    const { bridgeId, channels } = await bridged('alice', 'bob');
    const [alice, bob] = channels as [Channel, Channel];
    const outcome = desk.context!.transfers.blindInStasisBridge(alice, { context: 'phones', exten: '260' }, [['SIPTRANSFER', 'yes']]);
    assert.equal(outcome.result, 'Success');
    const one = outcome.replacement!;
    assert.match(one.name, /^Local\/260@phones-[0-9a-f]+;1$/);
    const start = await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === one.id);
    assert.equal(start.replace_channel.id, alice.id);
    const transfer = await nextEvent((e) => e.type === 'BridgeBlindTransfer');
    assert.deepEqual(
      [transfer.channel.id, transfer.transferee.id, transfer.replace_channel.id, transfer.exten, transfer.context, transfer.result, transfer.is_external, transfer.bridge.id],
      [alice.id, bob.id, one.id, '260', 'phones', 'Success', true, bridgeId],
    );
    assert.deepEqual([...transfer.bridge.channels].sort(), [bob.id, one.id].sort());
    assert.equal(alice.bridgeId, undefined);
    assert.equal(alice.stasis?.app, 'desk', 'the transferer stays in the application');
    assert.equal(one.getVariable('SIPTRANSFER'), 'yes');
    assert.equal(one.getVariable('BLINDTRANSFER'), alice.name);
    // The `;2` runs the dialplan at the target: its Answer() brings `;1` up.
    await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === one.id && e.channel.state === 'Up');
    for (const channel of [alice, bob, one]) channel.hangup();
    await watched.server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' });
  });

  test('three parties: no transferee named; not in a bridge: Invalid, nothing raised', async () => {
    const { bridgeId, channels } = await bridged('carol', 'dave', 'erin');
    const [carol] = channels as [Channel, Channel, Channel];
    const outcome = desk.context!.transfers.blindInStasisBridge(carol, { context: 'phones', exten: '260' });
    assert.equal(outcome.result, 'Success');
    const transfer = await nextEvent((e) => e.type === 'BridgeBlindTransfer');
    assert.equal(transfer.transferee, undefined);
    assert.equal(transfer.replace_channel.id, outcome.replacement!.id);
    assert.equal(transfer.bridge.channels.length, 3);

    const lone = desk.incoming('frank');
    await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === lone.id);
    assert.equal(desk.context!.transfers.blindInStasisBridge(lone, { context: 'phones', exten: '260' }).result, 'Invalid');
    for (const channel of [...channels, outcome.replacement!, lone]) channel.hangup();
    await watched.server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' });
  });
});

// The attended transfer a SIP REFER with Replaces asks for when the transferer's legs sit in
// applications' bridges (stasis-bridge-attended.ts): a Local pair links the two bridges.
describe('an attended transfer between Stasis bridges (Asterisk\'s default REFER handling), through the technology seam', () => {
  test('three parties on the first side: the Local halves take both seats, no transferee named, the second leg hung up, the first left in the application', async () => {
    const first = await bridged('gina', 'hank', 'ivan');
    const second = await bridged('gina2', 'judy');
    const [gina, hank, ivan] = first.channels as [Channel, Channel, Channel];
    const [gina2, judy] = second.channels as [Channel, Channel];
    assert.equal(desk.context!.transfers.canLink(gina2), true);
    assert.equal(desk.context!.transfers.attended(gina, gina2), 'Success');
    const transfer = await nextEvent((e) => e.type === 'BridgeAttendedTransfer');
    assert.equal(transfer.transferee, undefined, 'a bridge of three names no transferee');
    assert.equal(transfer.transfer_target.id, judy.id);
    assert.equal(transfer.destination_type, 'link');
    const one = transfer.destination_link_first_leg as Json;
    const two = transfer.destination_link_second_leg as Json;
    assert.deepEqual([...transfer.transferer_first_leg_bridge.channels].sort(), [gina.id, hank.id, ivan.id].sort(), 'the first bridge as it was');
    // Every other member of the first bridge is marked with the first leg; `;1` too.
    for (const member of [hank, ivan]) assert.equal(member.getVariable('ATTENDEDTRANSFER'), gina.name);
    const local = watched.server.core.channels.get(String(one.id))!;
    assert.equal(local.getVariable('ATTENDEDTRANSFER'), gina.name);
    assert.equal(local.peer?.id, two.id, 'the two halves of one Local pair');
    assert.equal(local.bridgeId, first.bridgeId);
    assert.equal(local.peer?.bridgeId, second.bridgeId);
    assert.deepEqual([local.state, local.peer?.state], ['Up', 'Up']);
    assert.equal(gina.bridgeId, undefined);
    assert.equal(gina.stasis?.app, 'desk', 'the first leg stays in the application');
    assert.equal(gina.hangingUp, false);
    assert.equal(gina2.hangingUp, true, 'the second leg is hung up');
    for (const channel of [gina, hank, ivan, judy, local]) channel.hangup();
    for (const bridgeId of [first.bridgeId, second.bridgeId]) await watched.server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' });
  });

  test('both legs in one bridge: Invalid, nothing moves; a leg in no bridge cannot be linked from', async () => {
    const { bridgeId, channels } = await bridged('kate', 'kate2', 'liam');
    const [kate, kate2] = channels as [Channel, Channel, Channel];
    assert.equal(desk.context!.transfers.attended(kate, kate2), 'Invalid');
    const transfer = await nextEvent((e) => e.type === 'BridgeAttendedTransfer');
    assert.deepEqual([transfer.result, transfer.destination_type], ['Invalid', 'fail']);
    assert.equal(kate.bridgeId, bridgeId);
    assert.equal(kate2.bridgeId, bridgeId);
    assert.equal(kate2.hangingUp, false, 'an invalid transfer hangs nobody up');
    const lone = desk.incoming('mona');
    await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === lone.id);
    assert.equal(desk.context!.transfers.canLink(lone), false);
    for (const channel of [...channels, lone]) channel.hangup();
    await watched.server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' });
  });
});
