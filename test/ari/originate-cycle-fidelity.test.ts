// One ARI originate cycle (POST /channels?endpoint=Local/answer@default&app=..., then DELETE) as an
// application sees it: the 15 frames Asterisk 22.10.1 sends, in its order and with its fields
// (docs/ari.md, "Fidelity of the originate cycle"): STASISSTATUS around Stasis, ChannelDialplan only
// when the position moves, ;1 shown as AppDial2, DELETE's soft hang-up with cause 32, and the Local
// pair's hang-up (;2's queued request, ;1 destroyed, ;2's soft end of its dialplan run, ;2 destroyed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchDialplanInSuite } from '../helpers/dialplan-server.ts';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)
`;
const APP = 'cycle-fidelity';

type Json = Record<string, any>;

const watched = watchDialplanInSuite(DIALPLAN, `app=${APP}`);

/** Collects frames until `last` matches, waiting generously for a loaded machine. */
async function collectUntil(frames: Json[], last: (frame: Json) => boolean): Promise<void> {
  for (;;) {
    const frame = (await watched.events.next(20_000)) as Json;
    frames.push(frame);
    if (last(frame)) return;
  }
}

/** The half (`;1` or `;2`) a frame is about. */
const half = (frame: Json): string => (frame.channel?.name ?? frame.peer?.name ?? '').slice(-2);
const place = (frame: Json): string => {
  const plan = frame.channel?.dialplan;
  return plan ? `${plan.app_name}(${plan.app_data})@${plan.priority}` : '';
};

test('an originate cycle raises the 15 frames Asterisk 22 raises, in its order, with its fields', async () => {
  const response = await watched.server.ari(`/channels?endpoint=${encodeURIComponent('Local/answer@default')}&app=${APP}`, { method: 'POST' });
  assert.equal(response.status, 200);
  const channel = (await response.json()) as Json;
  // ast_dial's prerun marked the channel before the response was written.
  assert.deepEqual(channel.dialplan, { context: 'default', exten: 'answer', priority: 1, app_name: 'AppDial2', app_data: '(Outgoing Line)' });

  const frames: Json[] = [];
  await collectUntil(frames, (frame) => frame.type === 'StasisStart');
  // ;2 moves on to Wait once its far end (;1) has the answer; let it get there before the DELETE.
  await collectUntil(frames, (frame) => frame.type === 'ChannelDialplan' && frame.dialplan_app === 'Wait');
  const deleted = await watched.server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  assert.equal(deleted.status, 204);
  await collectUntil(frames, (frame) => frame.type === 'ChannelDestroyed' && half(frame) === ';2');
  assert.deepEqual(await watched.events.quiet(300), [], 'nothing after ;2 is destroyed');

  const story = frames.map((frame) => `${frame.type} ${half(frame)}`);
  // The first two come from two threads in Asterisk and arrive in either order there.
  assert.deepEqual([...story.slice(0, 2)].sort(), ['ChannelDialplan ;2', 'Dial ;1']);
  assert.deepEqual(story.slice(2), [
    'ChannelStateChange ;2',
    'ChannelStateChange ;1',
    'Dial ;1',
    'ChannelVarset ;1',
    'StasisStart ;1',
    'ChannelDialplan ;2',
    'ChannelHangupRequest ;1',
    'StasisEnd ;1',
    'ChannelVarset ;1',
    'ChannelHangupRequest ;2',
    'ChannelDestroyed ;1',
    'ChannelHangupRequest ;2',
    'ChannelDestroyed ;2',
  ]);
  assert.equal(frames.length, 15);

  const byStory = (label: string, nth = 0): Json => frames.filter((_, i) => story[i] === label)[nth];
  const firstDialplan = byStory('ChannelDialplan ;2');
  assert.equal(firstDialplan.dialplan_app, 'Answer');
  assert.equal(firstDialplan.channel.dialplan.priority, 1);
  assert.equal(byStory('Dial ;1').dialstatus, '');
  assert.equal(byStory('Dial ;1', 1).dialstatus, 'ANSWER');
  assert.equal(place(byStory('ChannelStateChange ;1')), 'AppDial2((Outgoing Line))@1');

  const [statusIn, statusOut] = [byStory('ChannelVarset ;1'), byStory('ChannelVarset ;1', 1)];
  assert.deepEqual([statusIn.variable, statusIn.value], ['STASISSTATUS', '']);
  assert.deepEqual([statusOut.variable, statusOut.value], ['STASISSTATUS', 'SUCCESS']);
  assert.equal(place(statusIn), `Stasis(${APP})@1`);

  const wait = byStory('ChannelDialplan ;2', 1);
  assert.deepEqual([wait.dialplan_app, wait.dialplan_app_data, wait.channel.dialplan.priority], ['Wait', '3600', 2]);

  // DELETE: ast_softhangup(AST_SOFTHANGUP_EXPLICIT), the flag as cause.
  const explicit = byStory('ChannelHangupRequest ;1');
  assert.deepEqual([explicit.cause, explicit.soft], [32, true]);
  // ;2: the hang-up queued by its far end (the cause, not soft), then its dialplan run's end (APPUNLOAD, soft).
  const queued = byStory('ChannelHangupRequest ;2');
  assert.deepEqual([queued.cause, queued.soft], [16, undefined]);
  const appUnload = byStory('ChannelHangupRequest ;2', 1);
  assert.deepEqual([appUnload.cause, appUnload.soft], [16, true]);

  // What each half shows when destroyed: ;1 back to AppDial2 after Stasis, ;2 back to nothing after Wait.
  assert.equal(place(byStory('ChannelDestroyed ;1')), 'AppDial2((Outgoing Line))@1');
  assert.equal(place(byStory('ChannelDestroyed ;2')), '()@2');
  assert.equal(byStory('ChannelDestroyed ;1').cause, 16);
  assert.equal(byStory('ChannelDestroyed ;2').cause, 16);
});
