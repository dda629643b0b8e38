// IF, IFTIME, ISNULL, EXISTS, RAND, MATH: conditions and arithmetic, as func_logic, func_rand and
// func_math compute them.
import { randomInt } from 'node:crypto';
import { parseTimeSpec, timeSpecMatches, TimeSpecError } from '../../dialplan/time-spec.ts';
import type { DialplanFunction } from '../function-services.ts';

/** Asterisk's pbx_checkcondition: empty is false, a leading integer is its value, other text is true. */
export function isTrueCondition(condition: string): boolean {
  const trimmed = condition.trim();
  if (trimmed === '') return false;
  const match = /^[+-]?\d+/.exec(trimmed);
  return match ? Number.parseInt(match[0], 10) !== 0 : true;
}

/** `cond?then:else` → its three parts; the `:` part is optional. Quotes around branches are removed. */
function splitTernary(args: string): [string, string, string] | undefined {
  const question = args.indexOf('?');
  if (question < 0) return undefined;
  const rest = args.slice(question + 1);
  const colon = rest.indexOf(':');
  const then = colon < 0 ? rest : rest.slice(0, colon);
  const otherwise = colon < 0 ? '' : rest.slice(colon + 1);
  return [args.slice(0, question), stripQuotes(then.trim()), stripQuotes(otherwise.trim())];
}

function stripQuotes(text: string): string {
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

/** RAND's default maximum: RAND_MAX of glibc. */
const RAND_MAX = 2147483647;

export const logicFunctions: readonly DialplanFunction[] = [
  {
    name: 'IF',
    syntax: 'IF(expression?iftrue[:iffalse])',
    summary: 'iftrue when the expression is true (non-empty and not 0), iffalse otherwise.',
    category: 'logic',
    read({ args }) {
      const parts = splitTernary(args);
      if (!parts) return undefined;
      return isTrueCondition(parts[0]) ? parts[1] : parts[2];
    },
  },
  {
    name: 'IFTIME',
    syntax: 'IFTIME(times,weekdays,mdays,months[,timezone]?iftrue[:iffalse])',
    summary: 'iftrue when now falls within the time condition (as GotoIfTime writes it), iffalse otherwise.',
    category: 'logic',
    read({ args }) {
      const parts = splitTernary(args);
      if (!parts) return undefined;
      try {
        return timeSpecMatches(parseTimeSpec(parts[0])) ? parts[1] : parts[2];
      } catch (error) {
        if (error instanceof TimeSpecError) return undefined;
        throw error;
      }
    },
  },
  {
    name: 'ISNULL',
    syntax: 'ISNULL(data)',
    summary: '1 when data is empty, else 0.',
    category: 'logic',
    read: ({ args }) => (args === '' ? '1' : '0'),
  },
  {
    name: 'EXISTS',
    syntax: 'EXISTS(data)',
    summary: '1 when data is not empty, else 0.',
    category: 'logic',
    read: ({ args }) => (args === '' ? '0' : '1'),
  },
  {
    name: 'RAND',
    syntax: 'RAND([min][,max])',
    summary: 'A random integer between min (default 0) and max (default 2147483647), both included.',
    category: 'logic',
    read({ args }) {
      const [minText = '', maxText = ''] = args.split(',');
      let min = parseInteger(minText, 0);
      let max = parseInteger(maxText, RAND_MAX);
      if (min > max) [min, max] = [max, min];
      min = Math.max(min, -RAND_MAX);
      max = Math.min(max, RAND_MAX);
      // randomInt's upper bound is exclusive and the span must stay below 2^48.
      return String(randomInt(min, max + 1));
    },
  },
  {
    name: 'MATH',
    syntax: 'MATH(number1 op number2[,type])',
    summary: 'Arithmetic: + - * / % ^ << >> AND OR XOR and comparisons; type f (float, default), i (integer), h (hex), c (character).',
    category: 'logic',
    read: ({ args }) => math(args),
  },
];

function parseInteger(text: string, fallback: number): number {
  const trimmed = text.trim();
  if (!/^[+-]?\d{1,15}$/.test(trimmed)) return fallback;
  return Number.parseInt(trimmed, 10);
}

/** Longest operators first, so `<=` is not read as `<`. */
const MATH_OPERATORS = ['<<', '>>', '<=', '>=', '==', 'AND', 'XOR', 'OR', '+', '-', '*', '/', '%', '^', '<', '>'];
const MATH_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$|^0x[0-9a-f]+$/i;

function parseMathNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (!MATH_NUMBER.test(trimmed)) return undefined;
  return /^0x/i.test(trimmed) ? Number.parseInt(trimmed, 16) : Number(trimmed);
}

function math(args: string): string | undefined {
  const comma = args.lastIndexOf(',');
  const expression = comma < 0 ? args : args.slice(0, comma);
  const type = comma < 0 ? 'f' : args.slice(comma + 1).trim().toLowerCase();
  // The operator is searched after the first character so that a leading sign belongs to the number.
  let left: number | undefined;
  let right: number | undefined;
  let operator: string | undefined;
  for (let i = 1; i < expression.length && operator === undefined; i++) {
    for (const candidate of MATH_OPERATORS) {
      if (expression.startsWith(candidate, i)) {
        const before = expression.slice(0, i);
        // `1e-5`: the sign of an exponent is no operator.
        if ((candidate === '-' || candidate === '+') && /\de$/i.test(before.trim()) && !/^0x/i.test(before.trim())) continue;
        left = parseMathNumber(before);
        right = parseMathNumber(expression.slice(i + candidate.length));
        if (left !== undefined && right !== undefined) operator = candidate;
        break;
      }
    }
  }
  if (operator === undefined) {
    const only = parseMathNumber(expression);
    return only === undefined ? undefined : formatMath(only, type);
  }
  const a = left!;
  const b = right!;
  let result: number;
  switch (operator) {
    case '+':
      result = a + b;
      break;
    case '-':
      result = a - b;
      break;
    case '*':
      result = a * b;
      break;
    case '/':
      if (b === 0) return undefined;
      result = a / b;
      break;
    case '%':
      if (Math.trunc(b) === 0) return undefined;
      result = Math.trunc(a) % Math.trunc(b);
      break;
    case '^':
      result = a ** b;
      break;
    case '<<':
      result = Number(BigInt.asIntN(64, BigInt(Math.trunc(a)) << BigInt(Math.min(63, Math.max(0, Math.trunc(b))))));
      break;
    case '>>':
      result = Number(BigInt(Math.trunc(a)) >> BigInt(Math.min(63, Math.max(0, Math.trunc(b)))));
      break;
    case 'AND':
      result = Number(BigInt(Math.trunc(a)) & BigInt(Math.trunc(b)));
      break;
    case 'OR':
      result = Number(BigInt(Math.trunc(a)) | BigInt(Math.trunc(b)));
      break;
    case 'XOR':
      result = Number(BigInt(Math.trunc(a)) ^ BigInt(Math.trunc(b)));
      break;
    case '<':
      return a < b ? 'TRUE' : 'FALSE';
    case '>':
      return a > b ? 'TRUE' : 'FALSE';
    case '<=':
      return a <= b ? 'TRUE' : 'FALSE';
    case '>=':
      return a >= b ? 'TRUE' : 'FALSE';
    case '==':
      return a === b ? 'TRUE' : 'FALSE';
    default:
      return undefined;
  }
  return formatMath(result, type);
}

function formatMath(value: number, type: string): string | undefined {
  if (!Number.isFinite(value)) return undefined;
  switch (type) {
    case 'i':
    case 'int':
      return String(Math.trunc(value));
    case 'h':
    case 'hex':
      return Math.trunc(value) < 0 ? `-${(-Math.trunc(value)).toString(16)}` : Math.trunc(value).toString(16);
    case 'c':
    case 'char':
      return String.fromCharCode(Math.trunc(value) & 0xff);
    default: {
      // printf's %f, without the trailing zeros Asterisk strips.
      const fixed = value.toFixed(6);
      return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
    }
  }
}
