// Substitution in application arguments, the media placeholders (MusicOnHold, Record, Playback
// options) and start-up with a broken dialplan file.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EventSocket } from '../helpers/server.ts';
import { startTestServer } from '../helpers/server.ts';
import {
  assertNoChannels,
  channelOf,
  dialplanTrace,
  originate,
  startWatchedPbx,
  stopWatchedPbx,
  untilDestroyed,
  varsets,
  type PbxServer,
} from './pbx-helpers.ts';

const DIALPLAN = `
[globals]
GREETING=hi

[subst]
exten => _X.,1,Set(CALLERID(num)=5551234)
 same => n,NoOp(\${EXTEN}|\${CONTEXT}|\${CHANNEL}|\${CALLERID(num)}|\${UNIQUEID}|$[1 + 2]|$[\${EXTEN} > 100]|\${EXTEN:1:2}|\${GREETING})
 same => n,Set(AFTER=\${EXTEN}@\${CONTEXT}:\${PRIORITY})
 same => n,Goto(inc,start)
include => more

[more]
exten => inc,1,NoOp(included)
 same => n(start),Set(WHERE=\${CONTEXT},\${EXTEN})
 same => n,Hangup()

[inherit]
exten => start,1,Set(_SHARED=one-level)
 same => n,Set(__DEEP=every-level)
 same => n,Set(LOCALONLY=no)
 same => n,Set(CALLERID(all)="Alice" <200>)
 same => n,Dial(Local/seen@inherit,5,g)
 same => n,Hangup()
exten => seen,1,Set(SEEN=\${SHARED}|\${DEEP}|\${LOCALONLY}|\${CALLERID(num)}|\${CALLERID(name)})
 same => n,Hangup()

[media]
exten => moh,1,MusicOnHold(jazz,0.2)
 same => n,Record(apps-test.wav,0,1,q)
 same => n,Set(STATE=\${CHANNEL(state)})
 same => n,Hangup()
exten => moh-forever,1,Answer()
 same => n,MusicOnHold()
exten => playback-noanswer,1,Playback(one&two,noanswer)
 same => n,Set(STATE=\${CHANNEL(state)})
 same => n,Playback(three,skip)
 same => n,Hangup()
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  ({ pbx, events } = await startWatchedPbx(DIALPLAN));
});
after(() => stopWatchedPbx({ pbx, events }));

describe('substitution in application arguments', () => {
  test('${EXTEN}, ${CONTEXT}, ${CHANNEL}, ${CALLERID(num)}, ${UNIQUEID}, $[...], substrings and [globals]', async () => {
    const call = originate(pbx.server, 'Local/4242@subst');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    const trace = dialplanTrace(seen, call.two.name);
    assert.equal(trace[1], `NoOp(4242|subst|${call.two.name}|5551234|${call.two.id}|3|1|24|hi)@subst,4242,2`);
    // The channel stays at the dialed digits, not the pattern, and in the context searched.
    assert.deepEqual(varsets(seen, call.two.name, 'AFTER'), ['4242@subst:3']);
    assert.equal(trace[4], 'Set(WHERE=subst,inc)@subst,inc,2', 'a label found through an include; the context stays subst');
    assert.deepEqual(varsets(seen, call.two.name, 'WHERE'), ['subst,inc']);
    assertNoChannels(pbx.server);
  });
});

describe('inheritance into dialed channels', () => {
  test('_VAR arrives once as VAR, __VAR keeps going, other variables stay; the caller id reaches the dialed ;2 half', async () => {
    const call = originate(pbx.server, 'Local/start@inherit');
    const seen = await untilDestroyed(events, [call.one, call.two], 5000);
    const values = seen
      .filter((event) => event.type === 'ChannelVarset' && event.variable === 'SEEN')
      .map((event) => String(event.value));
    assert.deepEqual(values, ['one-level|every-level||200|Alice']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assertNoChannels(pbx.server);
  });
});

describe('media placeholders', () => {
  test('MusicOnHold plays for its duration and Record records until its maximum duration', async () => {
    const logged = pbx.server.logLines.length;
    const started = Date.now();
    const call = originate(pbx.server, 'Local/moh@media');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.ok(Date.now() - started >= 180, 'MusicOnHold waited');
    // Record is real too (test/ari/recordings-dialplan.test.ts checks what it writes).
    assert.deepEqual(varsets(seen, call.two.name, 'RECORD_STATUS'), ['TIMEOUT']);
    assert.deepEqual(varsets(seen, call.two.name, 'STATE'), ['Up'], 'Record answers the channel');
    const lines = pbx.server.logLines.slice(logged).filter((line) => line.includes('media engine'));
    // MusicOnHold is real now (test/ari/bridges-media.test.ts measures its audio): no placeholder line.
    assert.equal(lines.length, 0);
    assertNoChannels(pbx.server);
  });

  test('MusicOnHold without a duration waits until hangup', async () => {
    const call = originate(pbx.server, 'Local/moh-forever@media');
    assert.equal(await call.status, 'ANSWER');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(call.two.hangingUp, false);
    call.one.hangup();
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.deepEqual(dialplanTrace(seen, call.two.name), ['Answer()@media,moh-forever,1', 'MusicOnHold()@media,moh-forever,2']);
    assertNoChannels(pbx.server);
  });

  test('Playback with noanswer leaves the channel unanswered; skip skips it', async () => {
    const call = originate(pbx.server, 'Local/playback-noanswer@media');
    const seen = await untilDestroyed(events, [call.one, call.two]);
    assert.deepEqual(varsets(seen, call.two.name, 'STATE'), ['Ring']);
    assert.deepEqual(varsets(seen, call.two.name, 'PLAYBACKSTATUS'), ['FAILED', 'SUCCESS']);
    assert.ok(!seen.some((event) => event.type === 'ChannelStateChange' && channelOf(event).state === 'Up'));
    assertNoChannels(pbx.server);
  });
});

describe('dialplan file errors', () => {
  test('a syntax error makes start-up fail with an error naming file and line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-pbx-bad-'));
    try {
      const file = join(dir, 'extensions.conf');
      writeFileSync(file, '[ok]\nexten => s,1,NoOp()\nexten => this is not a valid line\n');
      await assert.rejects(startTestServer({ dialplan: { file } }), (err: Error) => {
        assert.ok(err.message.includes(`${file}:3`), err.message);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
