import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evaluateExpression, ExpressionError } from '../../src/dialplan/expression.ts';

const resolveFunction = (name: string, args: string) => (name === 'LEN' ? String(args.length) : name === 'NAME' ? 'alice' : undefined);
const evaluate = (expression: string) => evaluateExpression(expression, resolveFunction);

describe('evaluateExpression', () => {
  const cases: [string, string][] = [
    // arithmetic
    ['1 + 2', '3'],
    ['1+2', '3'],
    ['7 - 10', '-3'],
    ['3 - 1 - 1', '1'],
    ['2 * (3 + 4)', '14'],
    ['1 + 2 * 3', '7'],
    ['10 / 4', '2.5'],
    ['7 % 3', '1'],
    ['-7 % 3', '-1'],
    ['0.1 + 0.2', '0.3'],
    ['-5 + 2', '-3'],
    ['- (2 + 3)', '-5'],
    ['5 / 0', '2147483647'],
    ['a + 1', '1'],
    ['1 + a', '1'],
    ['a - 1', '-1'],
    ['a * 2', '0'],
    ['1000000 * 1000000 * 1000000', '1e+18'],
    // comparisons: numeric when both look numeric, lexical otherwise
    ['1 = 1', '1'],
    ['1 == 1', '1'],
    ['1 != 1', '0'],
    ['2 < 10', '1'],
    ['2 > 10', '0'],
    ['10 >= 010', '1'],
    ['1.5 > 1.25', '1'],
    ['3 <= 3', '1'],
    ['"2" < "10"', '0'],
    ['abc = abc', '1'],
    ['abc < abd', '1'],
    ['abc != abd', '1'],
    ['a = "a"', '0'],
    ['"a b" = "a b"', '1'],
    ['10 < 9a', '1'],
    ['1 + 2 = 3', '1'],
    // logic
    ['1 & 0', '0'],
    ['2 & 3', '2'],
    ['1 | 0', '1'],
    ['0 | 1 & 0', '0'],
    ['"" | fallback', '""'],
    ['0 | fallback', 'fallback'],
    ['1 = 1 & 2 = 2', '1'],
    ['1 = 1 && 2 = 3', '0'],
    ['0 || 5', '5'],
    ['!0', '1'],
    ['!5', '0'],
    ['!abc', '1'],
    ['1 ? yes :: no', 'yes'],
    ['0 ? yes :: no', 'no'],
    ['abc ? yes :: no', 'yes'],
    ['2 > 1 ? big :: small', 'big'],
    // string operators
    ['abc ~~ def', 'abcdef'],
    ['"ab" ~~ "cd"', 'abcd'],
    // Parentheses and colons are operators, so regular expressions using them must be quoted.
    ['"12345" : "1(2.)4"', '23'],
    ['abc : a.', '2'],
    ['abc : b', '0'],
    ['abc : "(x)"', ''],
    ['xabc =~ "b(c)"', 'c'],
    ['xabc =~ bc', '2'],
    ['a1b : "[[:alpha:]][[:digit:]]"', '2'],
    // functions
    ['ROUND(2.5)', '3'],
    ['ROUND(-2.5)', '-3'],
    ['RINT(2.5)', '2'],
    ['POW(2, 10)', '1024'],
    ['ABS(-3) + SQRT(16)', '7'],
    ['FLOOR(2.7) + CEIL(2.1)', '5'],
    ['LEN(abcd) + 1', '5'],
    ['NAME(x) = alice', '1'],
    ['NOSUCH(1)', '0'],
    // odds and ends
    ['', ''],
    ['   ', ''],
    ['"quoted"', '"quoted"'],
    ['plain', 'plain'],
    ['(((1)))', '1'],
  ];
  for (const [input, expected] of cases) {
    test(`$[${input}] = ${expected}`, () => assert.equal(evaluate(input), expected));
  }

  const errors = ['1 +', '(1 + 2', '1 2', '1 ? 2', ')', '"unterminated', '* 3'];
  for (const input of errors) {
    test(`$[${input}] is a syntax error`, () => assert.throws(() => evaluate(input), ExpressionError));
  }
});
