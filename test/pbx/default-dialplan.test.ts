// The embedded default dialplan run end to end: `echo`, `1000` (Stasis) and `hello`.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createFrame } from '../../src/media/frame.ts';
import type { EventSocket } from '../helpers/server.ts';
import {
  assertNoChannels,
  channelName,
  collectUntil,
  dialplanTrace,
  originate,
  startWatchedPbx,
  stopWatchedPbx,
  untilDestroyed,
  varsets,
  type PbxServer,
} from './pbx-helpers.ts';

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  ({ pbx, events } = await startWatchedPbx(null));
});
after(() => stopWatchedPbx({ pbx, events }));

describe('default dialplan', () => {
  test('echo: frames written into the ;1 half come back out of it, and DTMF too; # ends Echo', async () => {
    const call = originate(pbx.server, 'Local/echo@default');
    assert.equal(await call.status, 'ANSWER');
    await collectUntil(events, (event) => event.type === 'ChannelDialplan' && event.dialplan_app === 'Echo');

    const heard: Int16Array[] = [];
    call.one.addFrameListener((frame, channel) => {
      assert.equal(channel, call.one);
      heard.push(Int16Array.from(frame.samples));
    });
    for (let n = 1; n <= 3; n++) {
      const frame = createFrame(8000);
      frame.samples.fill(n * 1000);
      call.one.write(frame);
    }
    assert.deepEqual(
      heard.map((samples) => samples[0]),
      [1000, 2000, 3000],
    );
    assert.ok(heard.every((samples) => samples.length === 160));

    call.one.driver.sendDigit('5', 100);
    const dtmf = await collectUntil(events, (event) => event.type === 'ChannelDtmfReceived' && channelName(event) === call.one.name);
    assert.deepEqual(
      dtmf.filter((event) => event.type === 'ChannelDtmfReceived').map((event) => [channelName(event), event.digit]),
      [
        [call.two.name, '5'],
        [call.one.name, '5'],
      ],
    );

    // `#` is echoed and ends Echo(); the extension has no more steps, so the call ends.
    call.one.driver.sendDigit('#', 100);
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.ok(seen.some((event) => event.type === 'ChannelDtmfReceived' && channelName(event) === call.one.name && event.digit === '#'));
    assertNoChannels(pbx.server);
  });

  test('1000 enters Stasis(test-app,dialplan) with args [dialplan]; continue runs Hangup', async () => {
    const app = await pbx.server.events('app=test-app');
    try {
      const call = originate(pbx.server, 'Local/1000@default');
      const start = await app.nextOfType('StasisStart');
      assert.deepEqual(start.args, ['dialplan']);
      assert.equal((start.channel as Record<string, unknown>).name, call.two.name);
      assert.deepEqual((start.channel as Record<string, unknown>).dialplan, {
        context: 'default',
        exten: '1000',
        priority: 2,
        app_name: 'Stasis',
        app_data: 'test-app,dialplan',
      });
      assert.equal(await call.status, 'ANSWER');
      // What POST /channels/{id}/continue with no location does: the next priority.
      pbx.server.core.stasis.continue(call.two, { priority: call.two.location.priority + 1 });
      const end = await app.nextOfType('StasisEnd');
      assert.equal((end.channel as Record<string, unknown>).name, call.two.name);
      const seen = await untilDestroyed(events, [call.one, call.two]);
      assert.deepEqual(dialplanTrace(seen, call.two.name), [
        'Answer()@default,1000,1',
        'Stasis(test-app,dialplan)@default,1000,2',
        'Hangup()@default,1000,3',
      ]);
      assertNoChannels(pbx.server);
    } finally {
      await app.close();
    }
  });

  test('hello: answered, Playback(hello-world) plays the prompt to the caller at real speed, then Hangup', async () => {
    // Debian's asterisk-core-sounds-en-wav provides hello-world; without it Playback fails at once.
    const installed = existsSync('/usr/share/asterisk/sounds/en/hello-world.wav');
    const started = Date.now();
    const call = originate(pbx.server, 'Local/hello@default');
    const heard: Int16Array[] = [];
    call.one.addFrameListener((frame) => heard.push(Int16Array.from(frame.samples)));
    const seen = await untilDestroyed(events, [call.one, call.two], 6000);
    const took = Date.now() - started;
    assert.equal(await call.status, 'ANSWER');
    assert.deepEqual(dialplanTrace(seen, call.two.name), [
      'Answer()@default,hello,1',
      'Playback(hello-world)@default,hello,2',
      'Hangup()@default,hello,3',
    ]);
    assert.deepEqual(varsets(seen, call.two.name, 'PLAYBACKSTATUS'), [installed ? 'SUCCESS' : 'FAILED']);
    // The dialplan's playback is not an ARI playback: no Playback events.
    assert.ok(!seen.some((event) => event.type.startsWith('Playback')));
    if (installed) {
      // hello-world lasts about 1.4 s; the caller heard speech for that long.
      assert.ok(took >= 1300 && took < 3000, `the call lasted ${took} ms`);
      const loud = heard.filter((samples) => samples.reduce((sum, value) => sum + value * value, 0) / samples.length > 100_000).length;
      assert.ok(loud >= 20, `${loud} frames of speech of ${heard.length}`);
    }
    assertNoChannels(pbx.server);
  });
});
