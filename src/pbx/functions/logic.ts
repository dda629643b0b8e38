// IF, IFTIME, ISNULL, EXISTS, RAND, MATH: conditions and arithmetic, as func_logic, func_rand and
// func_math compute them.
import { randomInt } from 'node:crypto';
import { parseTimeSpec, timeSpecMatches, TimeSpecError } from '../../dialplan/time-spec.ts';
import { splitArgs } from '../../dialplan/args.ts';
import type { DialplanFunction } from '../function-services.ts';

/** Asterisk's pbx_checkcondition: empty is false, a leading integer is its value, other text is true. */
export function isTrueCondition(condition: string): boolean {
  const trimmed = condition.trim();
  if (trimmed === '') return false;
  const match = /^[+-]?\d+/.exec(trimmed);
  return match ? Number.parseInt(match[0], 10) !== 0 : true;
}

/**
 * `cond?then:else` → its three parts, split as Asterisk splits them: quotes and parentheses
 * protect a `?` or `:`, and the quotes are removed. Undefined without a `?` or without a condition.
 */
function splitTernary(args: string): [string, string, string] | undefined {
  const [condition = '', rest] = splitArgs(args, '?', 2);
  if (rest === undefined || condition.trim() === '') return undefined;
  const [then = '', otherwise = ''] = splitArgs(rest, ':', 2);
  return [condition.trim(), then.trim(), otherwise.trim()];
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
      // Both bounds into [-RAND_MAX, RAND_MAX] before ordering them (two bounds beyond the same
      // end would otherwise cross after clamping).
      min = Math.min(Math.max(min, -RAND_MAX), RAND_MAX);
      max = Math.min(Math.max(max, -RAND_MAX), RAND_MAX);
      if (min > max) [min, max] = [max, min];
      // randomInt's upper bound is exclusive and the span must stay below 2^48.
      return String(randomInt(min, max + 1));
    },
  },
  {
    name: 'MATH',
    syntax: 'MATH(number1 op number2[,type])',
    summary: 'Arithmetic on two numbers: * / % ^ AND XOR OR << >> + - and the comparisons < > <= >= == (TRUE/FALSE); type f (float, %f, default), i, h (hex) or c (character).',
    category: 'logic',
    read: ({ args }) => math(args),
  },
];

function parseInteger(text: string, fallback: number): number {
  const trimmed = text.trim();
  if (!/^[+-]?\d{1,15}$/.test(trimmed)) return fallback;
  return Number.parseInt(trimmed, 10);
}

/**
 * The operators in the order func_math looks for them: the first kind found anywhere in the text
 * wins (so `2+3*4` is `2+3` times `4`), subtraction last so that a negative second number works.
 */
const MATH_SEARCH_ORDER = ['*', '/', '%', '^', 'AND', 'XOR', 'OR', '>', '<', '=', '+', '-'] as const;

type MathResultType = 'float' | 'int' | 'hex' | 'char';

const MATH_RESULT_TYPES: ReadonlyMap<string, MathResultType> = new Map([
  ['f', 'float'],
  ['float', 'float'],
  ['i', 'int'],
  ['int', 'int'],
  ['h', 'hex'],
  ['hex', 'hex'],
  ['c', 'char'],
  ['char', 'char'],
]);

/** sscanf("%lf"): the longest number at the start of the text (after blanks), or undefined. */
function scanDouble(text: string): number | undefined {
  const match = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?/i.exec(text) ?? /^\s*[+-]?(?:inf(?:inity)?|nan)/i.exec(text);
  if (!match) return undefined;
  const word = match[0].trim().toLowerCase();
  if (word.includes('nan')) return Number.NaN;
  if (word.includes('inf')) return word.startsWith('-') ? -Infinity : Infinity;
  return Number(word);
}

/** C's (int) of a double on x86: out of range (or NaN) gives INT_MIN. */
function toInt32(value: number): number {
  const truncated = Math.trunc(value);
  return Number.isFinite(truncated) && truncated >= -2147483648 && truncated <= 2147483647 ? truncated : -2147483648;
}

/** MATH(number1 op number2[,type]) as func_math computes it; undefined where Asterisk fails. */
function math(args: string): string | undefined {
  const [expressionText = '', typeText] = splitArgs(args, ',', 2);
  let expression = expressionText;
  let type: MathResultType = 'float';
  if (typeText !== undefined) {
    const wanted = MATH_RESULT_TYPES.get(typeText.trim().toLowerCase());
    if (!wanted) return undefined;
    type = wanted;
  }
  const negative = expression.startsWith('-');
  if (negative) expression = expression.slice(1);
  let operator: string | undefined;
  let left = '';
  let right = '';
  for (const candidate of MATH_SEARCH_ORDER) {
    const at = expression.indexOf(candidate);
    if (at < 0) continue;
    left = expression.slice(0, at);
    right = expression.slice(at + candidate.length);
    operator = candidate;
    const next = right[0];
    if ((candidate === '>' || candidate === '<') && (next === '=' || next === candidate)) {
      operator = candidate + next;
      right = right.slice(1);
    } else if (candidate === '=') {
      if (next !== '=') return undefined;
      operator = '==';
      right = right.slice(1);
    }
    break;
  }
  if (operator === undefined) return undefined;
  const scannedLeft = scanDouble(left);
  const b = scanDouble(right);
  if (scannedLeft === undefined || b === undefined) return undefined;
  const a = negative ? -scannedLeft : scannedLeft;
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
      // As func_math: a divisor that is not positive gives 0.
      result = b <= 0 ? 0 : a / b;
      break;
    case '%': {
      const divisor = toInt32(b);
      result = divisor === 0 ? 0 : toInt32(a) % divisor;
      break;
    }
    case '^':
      result = a ** b;
      break;
    case '<<':
      result = toInt32(a) << (toInt32(b) & 31);
      break;
    case '>>':
      result = toInt32(a) >> (toInt32(b) & 31);
      break;
    case 'AND':
      result = toInt32(a) & toInt32(b);
      break;
    case 'OR':
      result = toInt32(a) | toInt32(b);
      break;
    case 'XOR':
      result = toInt32(a) ^ toInt32(b);
      break;
    case '>':
      return a > b ? 'TRUE' : 'FALSE';
    case '<':
      return a < b ? 'TRUE' : 'FALSE';
    case '>=':
      return a >= b ? 'TRUE' : 'FALSE';
    case '<=':
      return a <= b ? 'TRUE' : 'FALSE';
    default:
      return a === b ? 'TRUE' : 'FALSE';
  }
  return formatMath(result, type);
}

function formatMath(value: number, type: MathResultType): string {
  switch (type) {
    case 'int':
      return String(toInt32(value));
    case 'hex':
      return (toInt32(value) >>> 0).toString(16);
    case 'char':
      return String.fromCharCode(toInt32(value) & 0xff);
    default:
      // printf's %f, which is what Asterisk answers: MATH(3*8) is 24.000000.
      if (Number.isNaN(value)) return 'nan';
      if (!Number.isFinite(value)) return value < 0 ? '-inf' : 'inf';
      return value.toFixed(6);
  }
}
