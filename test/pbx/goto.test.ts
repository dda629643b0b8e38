// Goto and GotoIf, observed end to end as the ChannelDialplan events of a Local channel's `;2`
// half walking a dialplan file.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isTrueCondition } from '../../src/pbx/apps/goto.ts';
import type { EventSocket } from '../helpers/server.ts';
import { assertNoChannels, dialplanTrace, originate, startPbxServer, untilDestroyed, watchAll, type PbxServer } from './pbx-helpers.ts';

const DIALPLAN = `
[goto-test]
exten => start,1,NoOp(begin)
 same => n,Goto(target)
 same => n,NoOp(skipped)
 same => n(target),Set(X=1)
 same => n,GotoIf($[\${X} = 1]?branches,yes,1:branches,no,1)

exten => false-branch,1,Set(X=2)
 same => n,GotoIf($[\${X} = 1]?branches,yes,1:branches,no,1)

exten => lost-label,1,Goto(nolabel)
 same => n,NoOp(never)

exten => lost-context,1,Goto(nowhere,s,1)
 same => n,NoOp(never)

[branches]
exten => yes,1,GotoIf(0?bad:good)
 same => n(bad),NoOp(bad)
 same => n(good),GotoIf(?nowhere)
 same => n,Goto(+2)
 same => n,NoOp(skipped by +2)
 same => n,Goto(numbers,1)
exten => numbers,1,GotoIf(abc?text)
 same => n,NoOp(not reached)
 same => n(text),GotoIf(\${UNSET}?:empty)
 same => n,NoOp(not reached either)
 same => n(empty),Hangup()
exten => no,1,NoOp(false branch)
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  pbx = await startPbxServer(DIALPLAN);
});
after(() => pbx.stop());

describe('Goto and GotoIf', () => {
  before(async () => {
    events = await watchAll(pbx.server);
  });
  after(() => events.close());

  test('Goto by label, GotoIf branches, relative and two-part Goto, as ChannelDialplan events', async () => {
    const { one, two } = originate(pbx.server, 'Local/start@goto-test');
    const seen = await untilDestroyed(events, [one, two]);
    assert.deepEqual(dialplanTrace(seen, two.name), [
      'NoOp(begin)@goto-test,start,1',
      'Goto(target)@goto-test,start,2',
      'Set(X=1)@goto-test,start,4',
      'GotoIf(1?branches,yes,1:branches,no,1)@goto-test,start,5',
      'GotoIf(0?bad:good)@branches,yes,1',
      'GotoIf(?nowhere)@branches,yes,3',
      'Goto(+2)@branches,yes,4',
      'Goto(numbers,1)@branches,yes,6',
      'GotoIf(abc?text)@branches,numbers,1',
      'GotoIf(?:empty)@branches,numbers,3',
      'Hangup()@branches,numbers,5',
    ]);
    assertNoChannels(pbx.server);
  });

  test('a false condition takes the second branch', async () => {
    const { one, two } = originate(pbx.server, 'Local/false-branch@goto-test');
    const seen = await untilDestroyed(events, [one, two]);
    assert.deepEqual(dialplanTrace(seen, two.name), [
      'Set(X=2)@goto-test,false-branch,1',
      'GotoIf(0?branches,yes,1:branches,no,1)@goto-test,false-branch,2',
      'NoOp(false branch)@branches,no,1',
    ]);
    assertNoChannels(pbx.server);
  });

  test('an unknown label or context logs a warning and ends the call', async () => {
    for (const exten of ['lost-label', 'lost-context']) {
      const logged = pbx.server.logLines.length;
      const { one, two } = originate(pbx.server, `Local/${exten}@goto-test`);
      const seen = await untilDestroyed(events, [one, two]);
      assert.equal(dialplanTrace(seen, two.name).length, 1, 'nothing runs after the failed Goto');
      const warning = pbx.server.logLines.slice(logged).find((line) => line.includes('Goto: cannot go to'));
      assert.ok(warning, 'a warning names the failed target');
      assert.equal(JSON.parse(warning).level, 40);
      assertNoChannels(pbx.server);
    }
  });
});

describe('GotoIf conditions', () => {
  test('as pbx_checkcondition: empty and integer zero are false, other text is true', () => {
    for (const text of ['', '  ', '0', '00', ' 0', '-0', '0abc']) assert.equal(isTrueCondition(text), false, JSON.stringify(text));
    for (const text of ['1', '-1', '42', 'abc', 'yes', ' 7']) assert.equal(isTrueCondition(text), true, JSON.stringify(text));
  });
});
