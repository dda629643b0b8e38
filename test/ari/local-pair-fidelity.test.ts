// The order in which a Local pair whose `;1` is in an application comes apart, as a subscribe-all
// application sees it, captured from Asterisk 22.10.1 (dialfid36 captures, docs/differences.md).
// Asterisk's Local halves run on threads of their own, so some frames race there; what is asserted
// is the order Asterisk showed in most runs, and all of what it showed in every run:
// - `;2` runs Answer(), Hangup(17): `;2`'s request (16, soft: the end of its dialplan run), `;1`'s
//   queued request (17), `;2` destroyed (19 runs of 20 with `;1` in another application, 11 of 12
//   in the watching one), then `;1`'s StasisEnd, STASISSTATUS SUCCESS and ChannelDestroyed (17 both);
// - `;2` in Stasis() from the dialplan is DELETEd: `;2`'s request (32, soft), its StasisEnd and
//   STASISSTATUS, its APPUNLOAD request (16, soft), `;1`'s queued request (16), `;2` destroyed
//   (13 runs of 15), then `;1`'s StasisEnd, STASISSTATUS and ChannelDestroyed;
// - Dial() through Local (dialbridge35's dialshort capture): the callee's `;2` announces its copy of
//   the callee `;1`'s DIALEDPEERNUMBER as it is called (before the Dial event: app_dial calls, then
//   publishes), and the caller's `;1` gets CHANLOCALSTATUS (its `;2`'s DIALSTATUS) just before
//   the request its `;2`'s hang-up queues.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchDialplanInSuite } from '../helpers/dialplan-server.ts';

const APP = 'local-order-app';
const DIALPLAN = `
[local-order]
exten => hangup,1,Answer()
 same => n,Hangup(17)
exten => stasis,1,Answer()
 same => n,Stasis(${APP})
exten => dialshort,1,Dial(Local/short@local-order)
exten => short,1,Answer()
 same => n,Wait(0.5)
 same => n,Hangup()
`;

type Json = Record<string, any>;

const watched = watchDialplanInSuite(DIALPLAN, `app=${APP}&subscribeAll=true`);

/** Frames about the pair, read until both halves are destroyed (generous waits for a loaded machine). */
async function untilBothDestroyed(id: string, frames: Json[]): Promise<void> {
  const destroyed = new Set<string>();
  for (;;) {
    const frame = (await watched.events.next(20_000)) as Json;
    frames.push(frame);
    if (frame.type === 'ChannelDestroyed' && (frame.channel.id === id || frame.channel.id === `${id}-2`)) destroyed.add(frame.channel.id);
    if (destroyed.size === 2) return;
  }
}

/** The pair's frames as `type half [detail]`, without the ones that say nothing about the order. */
function story(frames: readonly Json[], id: string): string[] {
  const lines: string[] = [];
  for (const frame of frames) {
    const half = frame.channel?.id === id ? ';1' : frame.channel?.id === `${id}-2` ? ';2' : undefined;
    if (!half) continue;
    switch (frame.type) {
      case 'ChannelHangupRequest':
        lines.push(`HangupRequest ${half} ${frame.cause}${frame.soft ? ' soft' : ''}`);
        break;
      case 'ChannelVarset':
        if (frame.variable === 'STASISSTATUS' && frame.value !== '') lines.push(`STASISSTATUS ${half} ${frame.value}`);
        break;
      case 'StasisEnd':
      case 'ChannelDestroyed':
        lines.push(`${frame.type} ${half}${frame.type === 'ChannelDestroyed' ? ` ${frame.cause}` : ''}`);
        break;
    }
  }
  return lines;
}

test('Hangup(17) on a ;2 whose ;1 is in an application: ;2 is destroyed first, then ;1 leaves and is destroyed', async () => {
  const id = `lo-hangup-${Date.now()}`;
  const originated = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/hangup@local-order')}&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(originated.status, 200);
  const frames: Json[] = [];
  await untilBothDestroyed(id, frames);
  assert.deepEqual(story(frames, id), [
    'HangupRequest ;2 16 soft',
    'HangupRequest ;1 17',
    'ChannelDestroyed ;2 17',
    'StasisEnd ;1',
    'STASISSTATUS ;1 SUCCESS',
    'ChannelDestroyed ;1 17',
  ]);
});

test('DELETE of a ;2 in Stasis() from the dialplan: ;2 leaves and is destroyed before ;1 leaves its application', async () => {
  const id = `lo-stasis-${Date.now()}`;
  const originated = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/stasis@local-order')}&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(originated.status, 200);
  const frames: Json[] = [];
  for (let started = 0; started < 2; ) {
    const frame = (await watched.events.next(20_000)) as Json;
    if (frame.type === 'StasisStart' && (frame.channel.id === id || frame.channel.id === `${id}-2`)) started++;
  }
  const deleted = await watched.server.ari(`/channels/${id}-2`, { method: 'DELETE' });
  assert.equal(deleted.status, 204);
  await untilBothDestroyed(id, frames);
  assert.deepEqual(story(frames, id), [
    'HangupRequest ;2 32 soft',
    'StasisEnd ;2',
    'STASISSTATUS ;2 SUCCESS',
    'HangupRequest ;2 16 soft',
    'HangupRequest ;1 16',
    'ChannelDestroyed ;2 16',
    'StasisEnd ;1',
    'STASISSTATUS ;1 SUCCESS',
    'ChannelDestroyed ;1 16',
  ]);
});

test('Dial() through Local: the callee ;2 is announced its copy of DIALEDPEERNUMBER; the caller ;1 gets CHANLOCALSTATUS before its queued hang-up', async () => {
  const id = `lo-dial-${Date.now()}`;
  const originated = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/dialshort@local-order')}&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(originated.status, 200);
  const frames: Json[] = [];
  await untilBothDestroyed(id, frames);
  const lines: string[] = [];
  const who = (name: string | undefined): string => (name ?? '').replace(/-[0-9a-f]{8};/, ';');
  for (const frame of frames) {
    const name = who(frame.channel?.name);
    if (frame.type === 'ChannelVarset' && ['DIALEDPEERNUMBER', 'CHANLOCALSTATUS'].includes(frame.variable)) lines.push(`Varset ${name} ${frame.variable}=${frame.value}`);
    if (frame.type === 'Dial' && frame.dialstatus === '') lines.push(`Dial ${who(frame.peer.name)}`);
    if (frame.type === 'ChannelHangupRequest' && name.startsWith('Local/dialshort')) lines.push(`HangupRequest ${name} ${frame.cause}${frame.soft ? ' soft' : ''}`);
    if ((frame.type === 'ChannelDestroyed' || frame.type === 'StasisEnd') && name.startsWith('Local/dialshort')) lines.push(`${frame.type} ${name}`);
  }
  // As captured (dialbridge35 dialshort): the copy is announced on ;2 as the callee is called, before
  // its Dial event; the caller's ;1 hears how its ;2's Dial() ended just before its queued request.
  assert.deepEqual(lines, [
    'Dial Local/dialshort@local-order;1',
    'Varset Local/dialshort@local-order;2 DIALEDPEERNUMBER=',
    'Varset Local/short@local-order;1 DIALEDPEERNUMBER=short@local-order',
    'Varset Local/short@local-order;2 DIALEDPEERNUMBER=short@local-order',
    'Dial Local/short@local-order;1',
    'Varset Local/dialshort@local-order;2 DIALEDPEERNUMBER=short@local-order',
    'HangupRequest Local/dialshort@local-order;2 16 soft',
    'Varset Local/dialshort@local-order;1 CHANLOCALSTATUS=ANSWER',
    'HangupRequest Local/dialshort@local-order;1 16',
    'ChannelDestroyed Local/dialshort@local-order;2',
    'StasisEnd Local/dialshort@local-order;1',
    'ChannelDestroyed Local/dialshort@local-order;1',
  ]);
});

// The callee's identity crossing a Local pair as it is called (core_unreal's staged snapshot, captured
// from Asterisk 22.10.1: dialbridge35's dial capture and qos37's originate with a caller id): `;2`
// announces the copies of `;1`'s variables, then ChannelCallerId (only when `;1` has a connected
// party: it becomes `;2`'s caller) and ChannelConnectedLine (`;1`'s caller id becomes `;2`'s
// connected line), each only when it changed, then the Dial event follows.
function identityStory(frames: readonly Json[], names: (name: string) => string | undefined): string[] {
  const lines: string[] = [];
  for (const frame of frames) {
    const name = names(frame.channel?.name ?? frame.peer?.name ?? '');
    if (!name) continue;
    if (frame.type === 'ChannelVarset' && frame.variable === 'DIALEDPEERNUMBER') lines.push(`Varset ${name} ${frame.variable}=${frame.value}`);
    if (frame.type === 'ChannelCallerId') lines.push(`CallerId ${name} ${frame.channel.caller.name}<${frame.channel.caller.number}>`);
    if (frame.type === 'ChannelConnectedLine') lines.push(`ConnectedLine ${name} ${frame.channel.connected.name}<${frame.channel.connected.number}>`);
    if (frame.type === 'Dial' && frame.dialstatus === '') lines.push(`Dial ${name}`);
  }
  return lines;
}

test('Dial() through Local: the callee ;2 takes the callee ;1\'s caller id as its connected line (ChannelConnectedLine) before the Dial event', async () => {
  const id = `lo-colp-${Date.now()}`;
  const originated = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/dialshort@local-order')}&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(originated.status, 200);
  const frames: Json[] = [];
  await untilBothDestroyed(id, frames);
  const callee = (name: string): string | undefined => (name.startsWith('Local/short@local-order-') ? name.replace(/-[0-9a-f]{8};/, ';') : undefined);
  assert.deepEqual(identityStory(frames, callee), [
    'Varset Local/short@local-order;1 DIALEDPEERNUMBER=short@local-order',
    'CallerId Local/short@local-order;1 <dialshort>',
    'Varset Local/short@local-order;2 DIALEDPEERNUMBER=short@local-order',
    'ConnectedLine Local/short@local-order;2 <dialshort>',
    'Dial Local/short@local-order;1',
  ]);
  const connectedLine = frames.find((frame) => frame.type === 'ChannelConnectedLine' && callee(frame.channel.name) === 'Local/short@local-order;2')!;
  assert.deepEqual(connectedLine.channel.connected, { name: '', number: 'dialshort' });
  // As captured: ;2 still Ring, before its dialplan runs (no application yet), the snapshot's fields in Asterisk's order.
  assert.deepEqual(Object.keys(connectedLine.channel), ['id', 'name', 'state', 'protocol_id', 'caller', 'connected', 'accountcode', 'dialplan', 'creationtime', 'language']);
  assert.equal(connectedLine.channel.state, 'Ring');
  assert.deepEqual(connectedLine.channel.dialplan, { context: 'local-order', exten: 'short', priority: 1, app_name: '', app_data: '' });
});

test('originate of a Local pair with a caller id: ;2 raises ChannelCallerId, then ChannelConnectedLine, before the Dial event', async () => {
  const id = `lo-cid-${Date.now()}`;
  const originated = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/hangup@local-order')}&app=${APP}&channelId=${id}&otherChannelId=${id}-2&callerId=${encodeURIComponent('"Alice" <555>')}`, { method: 'POST' });
  assert.equal(originated.status, 200);
  const frames: Json[] = [];
  await untilBothDestroyed(id, frames);
  const pair = (name: string): string | undefined => (name.startsWith('Local/hangup@local-order-') ? name.replace(/-[0-9a-f]{8};/, ';') : undefined);
  const lines = identityStory(frames, pair).filter((line) => !line.startsWith('CallerId Local/hangup@local-order;1') && !line.startsWith('ConnectedLine Local/hangup@local-order;1'));
  assert.deepEqual(lines, ['CallerId Local/hangup@local-order;2 Alice<555>', 'ConnectedLine Local/hangup@local-order;2 Alice<555>', 'Dial Local/hangup@local-order;1']);
});
