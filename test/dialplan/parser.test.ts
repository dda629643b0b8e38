import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ParsedContext, ParsedDialplan } from '../../src/dialplan/parsed.ts';
import { DialplanSyntaxError, parseDialplan } from '../../src/dialplan/parser.ts';

function context(parsed: ParsedDialplan, name: string): ParsedContext {
  const found = parsed.contexts.find((candidate) => candidate.name === name);
  assert.ok(found, `context ${name} exists`);
  return found;
}

function steps(parsed: ParsedDialplan, contextName: string, extension: string) {
  const found = context(parsed, contextName).extensions.find((candidate) => candidate.name === extension);
  assert.ok(found, `extension ${extension} exists`);
  return found.steps.map(({ priority, label, app, appData }) => ({ priority, label, app, appData }));
}

function syntaxErrorOf(text: string, file = 'extensions.conf'): DialplanSyntaxError {
  try {
    parseDialplan(text, file);
  } catch (error) {
    assert.ok(error instanceof DialplanSyntaxError, `expected DialplanSyntaxError, got ${error}`);
    return error;
  }
  assert.fail('expected a syntax error');
}

describe('parseDialplan', () => {
  test('reads exten lines with numeric priorities, => or =, and bare applications', () => {
    const parsed = parseDialplan(`
[default]
exten => 100,1,Answer
exten = 100,2,Playback(hello-world)
exten=>100,3,Hangup()
`);
    assert.deepEqual(steps(parsed, 'default', '100'), [
      { priority: 1, label: undefined, app: 'Answer', appData: '' },
      { priority: 2, label: undefined, app: 'Playback', appData: 'hello-world' },
      { priority: 3, label: undefined, app: 'Hangup', appData: '' },
    ]);
  });

  test('resolves n, same =>, labels, s and label+offset priorities', () => {
    const parsed = parseDialplan(`
[ctx]
exten => s,1(start),NoOp(first)
 same => n,NoOp(second)
 same => n(loop),NoOp(third)
exten => s,n,NoOp(fourth)
exten => s,start+10,NoOp(eleven)
exten => s,s+1,NoOp(twelve)
exten => s,next(done),Hangup
`);
    assert.deepEqual(steps(parsed, 'ctx', 's'), [
      { priority: 1, label: 'start', app: 'NoOp', appData: 'first' },
      { priority: 2, label: undefined, app: 'NoOp', appData: 'second' },
      { priority: 3, label: 'loop', app: 'NoOp', appData: 'third' },
      { priority: 4, label: undefined, app: 'NoOp', appData: 'fourth' },
      { priority: 11, label: undefined, app: 'NoOp', appData: 'eleven' },
      { priority: 12, label: undefined, app: 'NoOp', appData: 'twelve' },
      { priority: 13, label: 'done', app: 'Hangup', appData: '' },
    ]);
  });

  test('keeps application data verbatim, including commas, quotes and inner parentheses', () => {
    const parsed = parseDialplan(`
[ctx]
exten => 1,1,Set(RESULT=\${IF($[\${X} > 1]?a:b)})
exten => 1,2,Dial(PJSIP/alice,30,"tT")
exten => 1,3,  NoOp(  spaced  )
`);
    assert.deepEqual(
      steps(parsed, 'ctx', '1').map((step) => step.appData),
      ['RESULT=${IF($[${X} > 1]?a:b)}', 'PJSIP/alice,30,"tT"', '  spaced  '],
    );
  });

  test('reads hints, includes, ignorepat and switches', () => {
    const parsed = parseDialplan(`
[internal]
exten => 100,hint,PJSIP/alice&PJSIP/bob
exten => 100,1,Dial(PJSIP/alice)
include => shared
include => office-hours,09:00-17:00,mon-fri,*,*
ignorepat => 9
switch => IAX2/user:[key]@server/context
`);
    const internal = context(parsed, 'internal');
    assert.equal(internal.extensions[0].hint, 'PJSIP/alice&PJSIP/bob');
    assert.equal(internal.extensions[0].steps.length, 1);
    assert.deepEqual(
      internal.includes.map(({ context: name, timing }) => ({ name, timing })),
      [
        { name: 'shared', timing: undefined },
        { name: 'office-hours', timing: '09:00-17:00,mon-fri,*,*' },
      ],
    );
    assert.deepEqual(internal.ignorePatterns, ['9']);
    assert.deepEqual(
      internal.switches.map(({ kind, module, data }) => ({ kind, module, data })),
      [{ kind: 'switch', module: 'IAX2', data: 'user:[key]@server/context' }],
    );
  });

  test('strips comments but not escaped semicolons, and skips block comments', () => {
    const parsed = parseDialplan(`
; a full-line comment
[ctx] ; trailing comment
exten => 1,1,NoOp(a\\;b) ; comment
;-- a block comment
exten => 1,2,NoOp(hidden)
--;
exten => 1,2,NoOp(shown) ;-- inline block --; ; and a comment
exten => 1,3,NoOp(x;--nested ;-- twice --; still --;y)
`);
    assert.deepEqual(
      steps(parsed, 'ctx', '1').map((step) => step.appData),
      ['a;b', 'shown', 'xy'],
    );
  });

  test('treats [general] and [globals] as settings; globals expand in later globals and extension names', () => {
    const parsed = parseDialplan(`
[general]
static=yes
autofallthrough=no

[globals]
TRUNK=PJSIP/provider
OUTBOUND=\${TRUNK}/out
OPERATOR => 0

[default]
exten => \${OPERATOR},1,Dial(\${OUTBOUND})
exten => \${OPERATOR},hint,\${TRUNK}
`);
    assert.deepEqual([...parsed.globals], [
      ['TRUNK', 'PJSIP/provider'],
      ['OUTBOUND', 'PJSIP/provider/out'],
      ['OPERATOR', '0'],
    ]);
    assert.equal(parsed.general.get('autofallthrough'), 'no');
    assert.deepEqual(parsed.contexts.map((c) => c.name), ['default']);
    // Application data is substituted at run time, not load time.
    assert.equal(steps(parsed, 'default', '0')[0].appData, '${OUTBOUND}');
    assert.equal(context(parsed, 'default').extensions[0].hint, 'PJSIP/provider');
  });

  test('merges repeated sections of one context, resetting n between them', () => {
    const parsed = parseDialplan(`
[ctx]
exten => 1,1,NoOp(a)
[other]
exten => 2,1,NoOp(b)
[ctx]
exten => 1,2,NoOp(c)
`);
    assert.deepEqual(steps(parsed, 'ctx', '1').map((step) => step.appData), ['a', 'c']);
    assert.match(syntaxErrorOf('[ctx]\nexten => 1,1,NoOp\n[ctx]\nexten => 1,n,NoOp\n').message, /^extensions\.conf:4: /);
  });

  test('supports templates, inheritance and (+) appends', () => {
    const parsed = parseDialplan(`
[common](!)
exten => i,1,Playback(invalid)
[sales](common)
exten => 1,1,NoOp(sales)
[sales](+)
exten => 2,1,NoOp(more)
`);
    assert.deepEqual(parsed.contexts.map((c) => c.name), ['sales']);
    assert.deepEqual(
      context(parsed, 'sales').extensions.map((e) => e.name),
      ['i', '1', '2'],
    );
  });

  test('reads caller ID restrictions and removes separator dashes', () => {
    const parsed = parseDialplan(`
[ctx]
exten => 555-1212/(555) 123-4567,1,NoOp(vip)
exten => _1-NXX-[2-5]XX,1,NoOp(pattern)
`);
    const [vip, pattern] = context(parsed, 'ctx').extensions;
    assert.equal(vip.name, '5551212');
    assert.equal(vip.callerId, '5551234567');
    assert.equal(pattern.name, '_1NXX[2-5]XX');
  });

  test('allows commas inside a pattern character class', () => {
    const parsed = parseDialplan('[ctx]\nexten => _[1,3]X,1,NoOp(x)\n');
    assert.equal(context(parsed, 'ctx').extensions[0].name, '_[1,3]X');
  });

  describe('syntax errors name the file and line', () => {
    const cases: [string, string, RegExp][] = [
      ['duplicate priority', '[c]\nexten => 1,1,NoOp\n\nexten => 1,1,NoOp\n', /^extensions\.conf:4: duplicate priority 1 .*line 2/],
      ['duplicate via n', '[c]\nexten => 1,1,NoOp\nexten => 1,2,NoOp\nexten => 1,1,NoOp\nexten => 1,n,NoOp\n', /^extensions\.conf:4: duplicate priority 1/],
      ['duplicate label', '[c]\nexten => 1,1(a),NoOp\nexten => 1,2(a),NoOp\n', /^extensions\.conf:3: duplicate label 'a'/],
      ['duplicate hint', '[c]\nexten => 1,hint,A\nexten => 1,hint,B\n', /^extensions\.conf:3: duplicate hint/],
      ['n first', '[c]\nexten => 1,n,NoOp\n', /^extensions\.conf:2: priority 'n' needs a preceding entry/],
      ['same first', '[c]\n same => n,NoOp\n', /^extensions\.conf:2: 'same' has no preceding 'exten'/],
      ['unknown label', '[c]\nexten => 1,nowhere,NoOp\n', /^extensions\.conf:2: invalid priority 'nowhere'/],
      ['priority zero', '[c]\nexten => 1,0,NoOp\n', /^extensions\.conf:2: invalid priority '0'/],
      ['missing priority', '[c]\nexten => 1\n', /^extensions\.conf:2: expected 'extension,priority,application'/],
      ['missing application', '[c]\nexten => 1,1\n', /^extensions\.conf:2: missing application/],
      ['unclosed arguments', '[c]\n\nexten => 1,1,NoOp(a\n', /^extensions\.conf:3: missing '\)'/],
      ['unclosed label', '[c]\nexten => 1,n(x,NoOp\n', /^extensions\.conf:2: label .* missing its closing/],
      ['text after )', '[c]\nexten => 1,1,NoOp(a) b\n', /^extensions\.conf:2: unexpected text after '\)'/],
      ['unknown directive', '[c]\nextn => 1,1,NoOp\n', /^extensions\.conf:2: unknown directive 'extn'/],
      ['no equals', '[c]\nexten 1,1,NoOp\n', /^extensions\.conf:2: expected 'name => value'/],
      ['outside section', 'exten => 1,1,NoOp\n', /^extensions\.conf:1: entry outside of any \[section\]/],
      ['unclosed section', '\n[c\n', /^extensions\.conf:2: section header is missing its closing '\]'/],
      ['bad pattern', '[c]\nexten => _1[23,1,NoOp\n', /^extensions\.conf:2: pattern '_1\[23' has '\['/],
      ['#include', '[c]\n#include other.conf\n', /^extensions\.conf:2: #include is not supported/],
      ['unclosed block comment', '[c]\n;-- never\nclosed\n', /^extensions\.conf:2: block comment/],
      ['append to nothing', '[c](+)\n', /^extensions\.conf:1: cannot append to section \[c\]/],
      ['empty include', '[c]\ninclude =>\n', /^extensions\.conf:2: include names no context/],
    ];
    for (const [name, text, expected] of cases) {
      test(name, () => assert.match(syntaxErrorOf(text).message, expected));
    }

    test('uses the file name given', () => {
      const error = syntaxErrorOf('[c]\n\n\nexten => 1,1\n', '/etc/patchbay/extensions.conf');
      assert.equal(error.message, '/etc/patchbay/extensions.conf:4: missing application');
      assert.equal(error.file, '/etc/patchbay/extensions.conf');
      assert.equal(error.line, 4);
    });

    test('counts lines in CRLF files', () => {
      assert.match(syntaxErrorOf('[c]\r\nexten => 1,1,NoOp\r\nexten => 1,1,NoOp\r\n').message, /^extensions\.conf:3: /);
    });
  });
});
