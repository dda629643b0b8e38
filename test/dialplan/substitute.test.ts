import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { substitute, substring, type FunctionResolver } from '../../src/dialplan/substitute.ts';

const variables: Record<string, string> = {
  FOO: 'bar',
  NAME: 'FOO',
  IDX: '2',
  FOO_2: 'second',
  NUM: '5551234',
  OFF: '3',
  A: '1',
  B: '2',
  LITERAL: '${FOO}',
  EMPTY: '',
};
const resolveVariable = (name: string) => variables[name];
const calls: [string, string][] = [];
const resolveFunction: FunctionResolver = (name, args) => {
  calls.push([name, args]);
  switch (name) {
    case 'LEN':
      return String(args.length);
    case 'CALLERID':
      return args === 'num' ? '5551234' : undefined;
    case 'ECHO':
      return args;
    default:
      return undefined;
  }
};
const sub = (text: string) => substitute(text, resolveVariable, resolveFunction);

describe('substitute', () => {
  const cases: [string, string][] = [
    ['plain text', 'plain text'],
    ['${FOO}', 'bar'],
    ['<${FOO}> and <${MISSING}>', '<bar> and <>'],
    ['${EMPTY}x', 'x'],
    ['${FOO:1}', 'ar'],
    ['${FOO:-2}', 'ar'],
    ['${NUM:0:3}', '555'],
    ['${NUM:-4:2}', '12'],
    ['${NUM:1:-1}', '55123'],
    ['${NUM:10}', ''],
    ['${NUM:-20:2}', '55'],
    ['${NUM:2:-10}', ''],
    ['${NUM:x}', '5551234'],
    ['${${NAME}}', 'bar'],
    ['${FOO_${IDX}}', 'second'],
    ['${NUM:${OFF}:2}', '12'],
    ['${LEN(${FOO})}', '3'],
    ['${CALLERID(num):0:3}', '555'],
    ['${ECHO(a:b)}', 'a:b'],
    ['${NOSUCH(x)}', ''],
    ['${ECHO(f(x))}', 'f(x)'],
    ['${LITERAL}', '${FOO}'],
    ['cost $5, $', 'cost $5, $'],
    ['$$[1+1]', '$2'],
    ['${FOO', 'bar'],
    ['$[${A} + ${B}]', '3'],
    ['$[$[1+1] * 3]', '6'],
    ['$[${FOO} = bar]', '1'],
    ['$[1 +]', '0'],
    ['Hello ${NAME}, you owe $[${NUM:0:1} * 2] dollars', 'Hello FOO, you owe 10 dollars'],
    ['${FOO}{}', 'bar{}'],
    ['$[LEN(abcd) + 1]', '5'],
  ];
  for (const [input, expected] of cases) {
    test(JSON.stringify(input), () => assert.equal(sub(input), expected));
  }

  test('functions are unknown without a function resolver', () => {
    assert.equal(substitute('<${LEN(abc)}>', resolveVariable), '<>');
  });

  test('the function resolver receives the name and raw arguments', () => {
    calls.length = 0;
    sub('${ECHO(a,b , c)}');
    assert.deepEqual(calls, [['ECHO', 'a,b , c']]);
  });
});

describe('substring', () => {
  test('follows Asterisk offset and length rules', () => {
    assert.equal(substring('abcdef', 0, Infinity), 'abcdef');
    assert.equal(substring('abcdef', 2, 2), 'cd');
    assert.equal(substring('abcdef', -3, Infinity), 'def');
    assert.equal(substring('abcdef', -3, -1), 'de');
    assert.equal(substring('abcdef', 0, -6), '');
    assert.equal(substring('abcdef', 6, 1), '');
  });
});
