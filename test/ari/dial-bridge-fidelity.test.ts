// Dial() through Local, as a subscribe-all application sees it: Asterisk 22.10.1's app_dial puts
// the answered pair in a basic bridge (ast_bridge_call), and ARI shows it. Captured there (the
// dialbridge35 captures, docs/differences.md "Dial() and its bridge"): DIAL* blanked as Dial
// starts, the callee's DIALEDPEERNUMBER, DIALSTATUS/DIALEDPEERNAME/DIALEDPEERNUMBER before the
// Dial ANSWER event, BridgeCreated (simple_bridge, mixing, basic, creator and name empty, video
// "none"), the callee's ChannelDialplan with its extension cleared, ChannelEnteredBridge callee then
// caller, BRIDGEPEER on both, and as it ends BRIDGEPEER cleared and ChannelLeftBridge (the party
// that left first), BridgeDestroyed, the call's times, DIALSTATUS again. GET /bridges lists the
// bridge; the bridge operations answer 409 "Bridge not in Stasis application". Hangup(cause) raises
// no request of its own, only its dialplan run's end (APPUNLOAD), as captured too. Only the frames
// Asterisk orders deterministically are compared in order: its Local halves run on threads of
// their own, so the rest interleave differently from run to run there.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)

[dialbridge]
exten => dial,1,Dial(Local/answer@default)
exten => dialshort,1,Dial(Local/short@dialbridge)
exten => short,1,Answer()
 same => n,Wait(0.5)
 same => n,Hangup()
exten => hangup,1,Answer()
 same => n,Hangup(17)
`;
const WATCHER = 'dial-bridge-watch';
const HOLDER = 'dial-bridge-holder';
const DIAL_VARIABLES = ['DIALSTATUS', 'DIALEDPEERNUMBER', 'DIALEDPEERNAME', 'ANSWEREDTIME', 'ANSWEREDTIME_MS', 'DIALEDTIME', 'DIALEDTIME_MS', 'RINGTIME', 'RINGTIME_MS', 'PROGRESSTIME', 'PROGRESSTIME_MS'];

type Json = Record<string, any>;

let server: TestServer;
let dir: string;
let watcher: EventSocket;
let holder: EventSocket;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-dial-bridge-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
  watcher = await server.events(`app=${WATCHER}&subscribeAll=true`);
  holder = await server.events(`app=${HOLDER}`);
});

after(async () => {
  await watcher?.close();
  await holder?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Collects frames until `last` matches, waiting generously for a loaded machine. */
async function collectUntil(frames: Json[], last: (frame: Json) => boolean): Promise<void> {
  for (;;) {
    const frame = (await watcher.next(20_000)) as Json;
    frames.push(frame);
    if (last(frame)) return;
  }
}

/** Names without the Local sequence number: `Local/answer@default;1`. */
const short = (name: string | undefined): string => (name ?? '').replace(/-[0-9a-f]{8};/, ';');

/** The frames whose order Asterisk fixes, each as `type who [detail]`. */
function story(frames: readonly Json[], caller: string, callee: string): string[] {
  const who = (name: string | undefined): string => (short(name) === caller ? 'caller' : short(name) === callee ? 'callee' : 'other');
  const lines: string[] = [];
  for (const frame of frames) {
    const name = frame.channel?.name as string | undefined;
    switch (frame.type) {
      case 'ChannelVarset':
        if (who(name) !== 'other' && (DIAL_VARIABLES.includes(frame.variable) || frame.variable.startsWith('BRIDGE'))) {
          // Times vary: only whether one is set.
          const value = /TIME/.test(frame.variable) && frame.value !== '' ? '<n>' : frame.value;
          lines.push(`Varset ${who(name)} ${frame.variable}=${value}`);
        }
        break;
      case 'Dial':
        if (who(frame.peer?.name) === 'callee') lines.push(`Dial callee ${frame.dialstatus}`);
        break;
      case 'BridgeCreated':
      case 'BridgeDestroyed':
        lines.push(`${frame.type} [${frame.bridge.channels.length}]`);
        break;
      case 'ChannelEnteredBridge':
      case 'ChannelLeftBridge':
        lines.push(`${frame.type} ${who(name)} [${frame.bridge.channels.length}]`);
        break;
      case 'ChannelDialplan':
        if (who(name) === 'callee') lines.push(`ChannelDialplan callee exten=${frame.channel.dialplan.exten}`);
        break;
      case 'ChannelHangupRequest':
        if (who(name) === 'caller') lines.push(`HangupRequest caller ${frame.cause}${frame.soft ? ' soft' : ''}`);
        break;
      case 'ChannelDestroyed':
        if (who(name) !== 'other') lines.push(`Destroyed ${who(name)}`);
        break;
    }
  }
  return lines;
}

const BLANKED = DIAL_VARIABLES.map((name) => `Varset caller ${name}=`);

/**
 * Originates `Local/<exten>@dialbridge` into the holding application: the caller is its `;2`
 * (`<id>-2`), which runs the Dial. Returns the `;1`'s id.
 */
async function originateDial(exten: string): Promise<string> {
  const id = `${exten}-${Date.now()}`;
  const originated = await server.ari(`/channels?endpoint=${encodeURIComponent(`Local/${exten}@dialbridge`)}&app=${HOLDER}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(originated.status, 200);
  return id;
}

/** The bridge dissolving: both lose BRIDGEPEER, then leave, `first` (the one whose leaving ended the call) first. */
const dissolved = (first: string, second: string): string[] => [`Varset ${first} BRIDGEPEER=`, `Varset ${second} BRIDGEPEER=`, `ChannelLeftBridge ${first} [1]`, `ChannelLeftBridge ${second} [0]`];

/** After the bridge: its destruction, the call's times and DIALSTATUS, and the end of both parties. */
const AFTER_THE_BRIDGE = [
  'BridgeDestroyed [0]',
  'Varset caller ANSWEREDTIME=<n>',
  'Varset caller ANSWEREDTIME_MS=<n>',
  'Varset caller DIALEDTIME=<n>',
  'Varset caller DIALEDTIME_MS=<n>',
  'Varset caller DIALSTATUS=ANSWER',
  'Destroyed callee',
  // Dial() returns -1: the caller's dialplan run ends, announced once (no request of Dial's own).
  'HangupRequest caller 16 soft',
  'Destroyed caller',
];

test('Dial() through Local: the basic bridge, BRIDGEPEER and the DIAL* variables as Asterisk 22 raises them; ARI lists the bridge and may not operate on it', async () => {
  const id = await originateDial('dial');
  const frames: Json[] = [];
  await collectUntil(frames, (frame) => frame.type === 'ChannelVarset' && frame.variable === 'BRIDGEPEER' && short(frame.channel.name) === 'Local/dial@dialbridge;2');

  const entered = frames.filter((frame) => frame.type === 'ChannelEnteredBridge');
  const bridgeId = entered[0].bridge.id as string;
  const calleeId = entered[0].channel.id as string;
  // GET /bridges and GET /bridges/{id} show it as Asterisk does (fields in its order).
  const listed = (await (await server.ari('/bridges')).json()) as Json[];
  const shown = listed.find((bridge) => bridge.id === bridgeId);
  assert.ok(shown, 'GET /bridges lists the basic bridge');
  assert.deepEqual(Object.keys(shown), ['id', 'technology', 'bridge_type', 'bridge_class', 'creator', 'name', 'channels', 'creationtime', 'video_mode']);
  assert.deepEqual(
    { ...shown, creationtime: undefined },
    { id: bridgeId, technology: 'simple_bridge', bridge_type: 'mixing', bridge_class: 'basic', creator: '', name: '', channels: [calleeId, `${id}-2`], creationtime: undefined, video_mode: 'none' },
  );
  const one = await server.ari(`/bridges/${bridgeId}`);
  assert.equal(one.status, 200);
  assert.deepEqual(await one.json(), shown);
  // Every operation on it: 409, as Asterisk's find_bridge answers for a bridge no application owns.
  const operations: [string, string][] = [
    ['POST', `/bridges/${bridgeId}/addChannel?channel=${id}`],
    ['POST', `/bridges/${bridgeId}/removeChannel?channel=${id}-2`],
    ['POST', `/bridges/${bridgeId}/moh`],
    ['POST', `/bridges/${bridgeId}/play?media=sound:beep`],
    ['POST', `/bridges/${bridgeId}/record?name=dialbridge-${Date.now()}&format=wav`],
    ['GET', `/bridges/${bridgeId}/variable?variable=FOO`],
    ['DELETE', `/bridges/${bridgeId}`],
  ];
  for (const [method, path] of operations) {
    const answer = await server.ari(path, { method });
    assert.deepEqual({ status: answer.status, body: await answer.json() }, { status: 409, body: { message: 'Bridge not in Stasis application' } }, `${method} ${path}`);
  }

  const deleted = await server.ari(`/channels/${id}`, { method: 'DELETE' });
  assert.equal(deleted.status, 204);
  await collectUntil(frames, (frame) => frame.type === 'ChannelDestroyed' && frame.channel.id === `${id}-2`);

  assert.deepEqual(story(frames, 'Local/dial@dialbridge;2', 'Local/answer@default;1'), [
    ...BLANKED,
    'Varset callee DIALEDPEERNUMBER=answer@default',
    'ChannelDialplan callee exten=dial',
    'Dial callee ',
    'Varset caller DIALSTATUS=ANSWER',
    `Varset caller DIALEDPEERNAME=${entered[0].channel.name}`,
    'Varset caller DIALEDPEERNUMBER=answer@default',
    'Dial callee ANSWER',
    'BridgeCreated [0]',
    'ChannelDialplan callee exten=',
    'ChannelEnteredBridge callee [1]',
    'ChannelEnteredBridge caller [2]',
    `Varset callee BRIDGEPEER=${entered[1].channel.name}`,
    `Varset caller BRIDGEPEER=${entered[0].channel.name}`,
    // DELETE of ;1: its partner (the caller) gets the queued request, and leaves first.
    'HangupRequest caller 16',
    ...dissolved('caller', 'callee'),
    ...AFTER_THE_BRIDGE,
  ]);

  // The callee, left alone in the dissolved bridge, is hung up outright: no hang-up request of its
  // own (its Local ;2 gets the queued one), as Asterisk's ast_hangup of the bridge's other party.
  const calleeRequests = frames.filter((frame) => frame.type === 'ChannelHangupRequest' && frame.channel.id === calleeId);
  assert.deepEqual(calleeRequests, []);
  const calleeTwo = frames.filter((frame) => frame.type === 'ChannelHangupRequest' && short(frame.channel.name) === 'Local/answer@default;2');
  assert.deepEqual(calleeTwo.map((frame) => [frame.cause, frame.soft]), [[16, undefined], [16, true]]);

  // The fields of the bridge events, as captured.
  const created = frames.find((frame) => frame.type === 'BridgeCreated')!;
  assert.deepEqual({ ...created.bridge, creationtime: undefined }, { ...shown, channels: [], creationtime: undefined });
  const answer = frames.find((frame) => frame.type === 'Dial' && frame.dialstatus === 'ANSWER' && frame.peer.id === calleeId)!;
  assert.equal(answer.peer.dialplan.exten, '', 'the Dial ANSWER event shows the callee with its extension cleared');
  const left = frames.filter((frame) => frame.type === 'ChannelLeftBridge');
  assert.deepEqual(left.map((frame) => frame.bridge.channels), [[calleeId], []]);
  const times = frames.filter((frame) => frame.type === 'ChannelVarset' && /^(ANSWERED|DIALED)TIME(_MS)?$/.test(frame.variable) && frame.value !== '');
  for (const frame of times) assert.match(frame.value, /^\d+$/, `${frame.variable} is a whole number`);
  assert.deepEqual(await server.ari(`/bridges/${bridgeId}`).then((r) => r.status), 404, 'the bridge is gone');
});

test('Dial() through Local, the callee hangs up: it leaves the bridge first, and each side raises one APPUNLOAD hang-up request', async () => {
  const id = await originateDial('dialshort');
  const frames: Json[] = [];
  await collectUntil(frames, (frame) => frame.type === 'ChannelDestroyed' && frame.channel.id === `${id}-2`);

  const lines = story(frames, 'Local/dialshort@dialbridge;2', 'Local/short@dialbridge;1');
  const end = lines.slice(lines.indexOf('Varset callee BRIDGEPEER='));
  assert.deepEqual(end, [...dissolved('callee', 'caller'), ...AFTER_THE_BRIDGE]);
  // Hangup() on the callee's ;2: only its dialplan run's end is announced (cause 16, soft).
  const requests = frames.filter((frame) => frame.type === 'ChannelHangupRequest' && short(frame.channel.name) === 'Local/short@dialbridge;2');
  assert.deepEqual(requests.map((frame) => [frame.cause, frame.soft]), [[16, true]]);
});

test('Hangup(17): its channel announces only the end of its dialplan run (16, soft); the partner hears 17, both are destroyed with 17', async () => {
  const id = await originateDial('hangup');
  const frames: Json[] = [];
  const destroyed = new Set<string>();
  const ours = (frame: Json): boolean => frame.channel?.id === id || frame.channel?.id === `${id}-2`;
  await collectUntil(frames, (frame) => frame.type === 'ChannelDestroyed' && ours(frame) && destroyed.add(frame.channel.id).size === 2);
  const requests = (channelId: string): unknown[] => frames.filter((frame) => frame.type === 'ChannelHangupRequest' && frame.channel.id === channelId).map((frame) => [frame.cause, frame.soft]);
  assert.deepEqual(requests(`${id}-2`), [[16, true]]);
  assert.deepEqual(requests(id), [[17, undefined]]);
  const causes = frames.filter((frame) => frame.type === 'ChannelDestroyed' && ours(frame)).map((frame) => frame.cause);
  assert.deepEqual(causes, [17, 17]);
});
