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
