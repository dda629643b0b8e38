import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Dialplan } from '../../src/dialplan/dialplan.ts';

describe('Dialplan lookups', () => {
  const plan = Dialplan.parse(
    `
[default]
exten => 100,1(start),Answer()
 same => n,Playback(hello-world)
 same => n(bye),Hangup()
exten => 100,hint,PJSIP/alice
exten => s,1,NoOp(start)
`,
    'lookups.conf',
  );

  test('find returns the step with its label, source and the context defining it', () => {
    assert.deepEqual(plan.find('default', '100', 2), {
      context: 'default',
      extension: '100',
      priority: 2,
      app: 'Playback',
      appData: 'hello-world',
      file: 'lookups.conf',
      line: 4,
    });
    assert.equal(plan.find('default', '100', 1)?.label, 'start');
    assert.equal(plan.find('default', '100', 4), undefined);
    assert.equal(plan.find('default', '101', 1), undefined);
    assert.equal(plan.find('nowhere', '100', 1), undefined);
  });

  test('findLabel, nextPriority and exists', () => {
    assert.equal(plan.findLabel('default', '100', 'bye'), 3);
    assert.equal(plan.findLabel('default', '100', 'missing'), undefined);
    assert.equal(plan.nextPriority('default', '100', 1), 2);
    assert.equal(plan.nextPriority('default', '100', 3), undefined);
    assert.equal(plan.exists('default', '100'), true);
    assert.equal(plan.exists('default', '100', 3), true);
    assert.equal(plan.exists('default', '100', 9), false);
    assert.equal(plan.exists('default', 's'), true);
  });

  test('hint and listings', () => {
    assert.equal(plan.hint('default', '100'), 'PJSIP/alice');
    assert.equal(plan.hint('default', 's'), undefined);
    assert.deepEqual(plan.contexts(), ['default']);
    assert.equal(plan.hasContext('default'), true);
    assert.deepEqual(plan.extensions('default'), ['100', 's']);
  });

  test('dialed separators are ignored', () => {
    assert.equal(plan.exists('default', '1-0-0'), true);
  });
});

describe('pattern matching precedence', () => {
  const plan = Dialplan.parse(`
[ctx]
exten => _X.,1,NoOp(any)
exten => _NXX,1,NoOp(nxx)
exten => 123,1,NoOp(exact)
exten => _1!,1,NoOp(one-bang)
exten => _1XX,1,NoOp(1xx)
exten => _[1-5]2[135-7],1,NoOp(sets)
exten => _ZX,1,NoOp(zx)
`);
  const cases: [string, string | undefined][] = [
    ['123', '123'], // an exact name beats every pattern
    ['234', '_NXX'], // N (8 digits) is more specific than X (10)
    ['999', '_NXX'],
    ['135', '_1XX'], // a literal 1 beats N/X, and X beats !
    ['1', '_1!'], // ! matches nothing more, . needs at least one
    ['1234', '_1!'], // 1 beats X at the first position
    ['525', '_[1-5]2[135-7]'], // [1-5] (5 chars) beats N (8 chars)
    ['526', '_[1-5]2[135-7]'],
    ['524', '_NXX'], // 4 is not in [135-7]
    ['90', '_ZX'],
    ['05', '_X.'],
    ['0', undefined], // . needs one more character
    ['', undefined],
    ['abc', undefined],
  ];
  for (const [dialed, expected] of cases) {
    test(`${JSON.stringify(dialed)} → ${expected}`, () => assert.equal(plan.matchExtension('ctx', dialed), expected));
  }

  test('lower-case x, z and n are classes too, and dashes are eye candy', () => {
    const lower = Dialplan.parse('[c]\nexten => _nxx-xxxx,1,NoOp\n');
    assert.equal(lower.matchExtension('c', '555-1234'), '_nxxxxxx');
    assert.equal(lower.matchExtension('c', '155-1234'), undefined);
  });

  test('a pattern can be addressed by its own text', () => {
    assert.equal(plan.find('ctx', '_X.', 1)?.appData, 'any');
    assert.equal(plan.find('ctx', '_[0-9].', 1)?.appData, 'any');
  });

  test('a more specific extension lacking the priority does not hide a broader one', () => {
    const gaps = Dialplan.parse(`
[c]
exten => _X.,1,NoOp(pattern 1)
exten => _X.,2,NoOp(pattern 2)
exten => 123,2,NoOp(exact 2)
`);
    assert.equal(gaps.find('c', '123', 1)?.appData, 'pattern 1');
    assert.equal(gaps.find('c', '123', 2)?.appData, 'exact 2');
    assert.equal(gaps.matchExtension('c', '123'), '_X.');
  });

  test('canMatch and matchMore support collecting digits', () => {
    const dialing = Dialplan.parse(`
[c]
exten => 100,1,NoOp
exten => _2XX,1,NoOp
exten => _3!,1,NoOp
`);
    assert.equal(dialing.canMatch('c', '1'), true);
    assert.equal(dialing.canMatch('c', '100'), true);
    assert.equal(dialing.canMatch('c', '4'), false);
    assert.equal(dialing.matchMore('c', '10'), true);
    assert.equal(dialing.matchMore('c', '100'), false);
    assert.equal(dialing.matchMore('c', '2'), true);
    assert.equal(dialing.matchMore('c', '200'), false);
    assert.equal(dialing.matchMore('c', '3'), false); // ! accepts the number as dialed
    assert.equal(dialing.canMatch('c', '3'), true);
  });

  test('caller ID variants apply only to matching callers and win over the general extension', () => {
    const byCaller = Dialplan.parse(`
[c]
exten => 100,1,NoOp(everyone)
exten => 100/_555XXXX,1,NoOp(local caller)
exten => 100/2000,1,NoOp(the boss)
`);
    assert.equal(byCaller.find('c', '100', 1)?.appData, 'everyone');
    assert.equal(byCaller.find('c', '100', 1, '5551234')?.appData, 'local caller');
    assert.equal(byCaller.find('c', '100', 1, '2000')?.appData, 'the boss');
    assert.equal(byCaller.find('c', '100', 1, '999')?.appData, 'everyone');
  });
});

describe('includes', () => {
  const plan = Dialplan.parse(`
[phones]
exten => 100,1,NoOp(phones 100)
include => shared
include => fallback

[shared]
exten => 200,1,NoOp(shared 200)
exten => _1XX,1,NoOp(shared pattern)
include => phones

[fallback]
exten => _X.,1,NoOp(fallback)
exten => 200,1,NoOp(fallback 200)
include => fallback

[loop-a]
include => loop-b
[loop-b]
include => loop-a
`);

  test('own extensions come before included ones, even less specific ones', () => {
    assert.equal(plan.find('phones', '100', 1)?.appData, 'phones 100');
    assert.equal(plan.find('phones', '101', 1)?.appData, 'shared pattern');
  });

  test('includes are searched in order, recursively, and report where the step lives', () => {
    const step = plan.find('phones', '200', 1);
    assert.equal(step?.appData, 'shared 200');
    assert.equal(step?.context, 'shared');
    assert.equal(plan.find('phones', '999', 1)?.context, 'fallback');
    assert.equal(plan.matchExtension('phones', '999'), '_X.');
  });

  test('include loops terminate', () => {
    assert.equal(plan.find('shared', '999', 1)?.appData, 'fallback');
    assert.equal(plan.find('loop-a', '1', 1), undefined);
    assert.equal(plan.canMatch('loop-a', '1'), false);
    assert.equal(plan.find('fallback', 'x', 1), undefined);
  });

  test('includes of unknown contexts are skipped', () => {
    const dangling = Dialplan.parse('[c]\ninclude => nowhere\nexten => 1,1,NoOp\n');
    assert.equal(dangling.exists('c', '1'), true);
    assert.equal(dangling.exists('c', '2'), false);
  });

  test('an inactive include is skipped', () => {
    const text = `
[c]
include => day,09:00-17:00,*,*,*
include => night
[day]
exten => 1,1,NoOp(day)
[night]
exten => 1,1,NoOp(night)
`;
    const timed = Dialplan.parse(text, 'timed.conf', { isIncludeActive: (include) => include.timing === undefined });
    assert.equal(timed.find('c', '1', 1)?.appData, 'night');
  });
});
