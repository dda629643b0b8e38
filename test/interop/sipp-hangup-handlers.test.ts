// SIPp calls a dialplan that pushes hang-up handlers (CHANNEL(hangup_handler_push)): after the
// phone's BYE the channel runs its `h` extension, then its handlers, last pushed first, each with
// its own ${ARG1} and the channel's variables, and only then is destroyed, as Asterisk 22 does
// (__ast_pbx_run runs `h`, then ast_pbx_hangup_handler_run, before ast_hangup ends the channel).
// A SIP channel in Stasis with a handler an ARI client pushed runs it on DELETE, before
// ChannelDestroyed, and the phone still gets its BYE.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangupStory as storyOf } from './hangup-story.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, sippCall, startSippServer, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const DIALPLAN = `
[hh-in]
exten => bye,1,Goto(hh,bye,1)
exten => stasis,1,Goto(hh,stasis,1)

[hh]
exten => bye,1,Answer()
 same => n,Set(WHO=\${CALLERID(num)})
 same => n,Set(CHANNEL(hangup_handler_push)=hh-handlers,s,1(first))
 same => n,Set(CHANNEL(hangup_handler_push)=hh-handlers,s,1(second))
 same => n,Wait(30)
exten => stasis,1,Answer()
 same => n,Set(WHO=stasis-\${CALLERID(num)})
 same => n,Stasis(hh-watch)
exten => h,1,UserEvent(HExten)

[hh-handlers]
exten => s,1,UserEvent(HangupHandler,which: \${ARG1},who: \${WHO},cause: \${HANGUPCAUSE})
 same => n,Return()
`;

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sipp-hangup-handlers', DIALPLAN, { endpoint: { bob: { context: 'hh-in', allow: 'ulaw' } } }, 'hh-watch');
  // The phone's scenarios stream audio.wav once answered.
  if (HAVE_SOX) writeSippTone(peer.work, 440, 30, 0.5);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

const call = (scenario: string, exten: string, extra: string[] = []) => sippCall(peer, 'bob', scenario, exten, extra);

/** The call's events from its first hang-up request to its ChannelDestroyed, one line each. */
const hangupStory = (channelId: string, seen: Json[]): Promise<string[]> =>
  storyOf(peer, channelId, seen, {
    where: (dialplan) => `@${dialplan.context},${dialplan.exten},${dialplan.priority} ${dialplan.app_name}`,
    userevent: (event) => (event.eventname === 'HangupHandler' ? `Userevent ${event.eventname} ${event.userevent.which} ${event.userevent.who} ${event.userevent.cause}` : `Userevent ${event.eventname}`),
    destroyed: () => 'Destroyed',
  });

/** One handler's steps on the hung-up channel, and what its UserEvent says. */
const handlerSteps = (which: string, who: string): string[] => [
  'Dialplan @hh-handlers,s,1 UserEvent',
  `Userevent HangupHandler ${which} ${who} 16`,
  'Dialplan @hh-handlers,s,2 Return',
];

describe('hang-up handlers of a SIP call', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('the phone\'s BYE: h, then the handlers last pushed first, then ChannelDestroyed', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-hangup.xml', 'bye', ['-d', '1000']);
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'ChannelCreated' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    assert.deepEqual(await hangupStory(start.channel.id, seen), [
      'HangupRequest',
      'HangupRequest 16 soft',
      'Dialplan @hh,h,1 UserEvent',
      'Userevent HExten',
      ...handlerSteps('second', 'bob'),
      ...handlerSteps('first', 'bob'),
      'Destroyed',
    ]);
    assert.equal((await run.done).status, 0);
  });

  test('a handler ARI pushed on a channel in Stasis runs on DELETE before ChannelDestroyed; the phone gets its BYE', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-wait-bye.xml', 'stasis');
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'StasisStart' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    const id = String(start.channel.id);
    const variable = encodeURIComponent('CHANNEL(hangup_handler_push)');
    const pushed = await peer.server.ari(`/channels/${id}/variable?variable=${variable}&value=${encodeURIComponent('hh-handlers,s,1(from-ari)')}`, { method: 'POST' });
    assert.equal(pushed.status, 204);
    assert.equal((await peer.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual(await hangupStory(id, seen), [
      'HangupRequest 32 soft',
      'StasisEnd',
      'HangupRequest 16 soft',
      'Dialplan @hh,h,1 UserEvent',
      'Userevent HExten',
      ...handlerSteps('from-ari', 'stasis-bob'),
      'Destroyed',
    ]);
    assert.equal((await run.done).status, 0);
  });
});
