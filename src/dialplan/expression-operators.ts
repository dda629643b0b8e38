// The operators of `$[...]` with Asterisk's coercions: non-numeric operands of arithmetic are
// mostly ignored rather than errors, and comparisons go lexical as soon as one side is a string.
import {
  booleanValue,
  isZeroOrEmpty,
  numberValue,
  textValue,
  toNumber,
  toText,
  ZERO,
  type ExpressionValue,
} from './expression-value.ts';
import { boundedSubject, compileBoundedRegex } from '../util/bounded-regex.ts';

/** What Asterisk answers for a division by zero or by a string. */
const INT_MAX = 2147483647;

export type ComparisonOperator = '=' | '!=' | '<' | '>' | '<=' | '>=';

export function compare(operator: ComparisonOperator, a: ExpressionValue, b: ExpressionValue): ExpressionValue {
  let order: number;
  if (a.kind === 'string' || b.kind === 'string') {
    const left = toText(a);
    const right = toText(b);
    order = left < right ? -1 : left > right ? 1 : 0;
  } else {
    const left = toNumber(a)!;
    const right = toNumber(b)!;
    order = left < right ? -1 : left > right ? 1 : 0;
  }
  switch (operator) {
    case '=':
      return booleanValue(order === 0);
    case '!=':
      return booleanValue(order !== 0);
    case '<':
      return booleanValue(order < 0);
    case '>':
      return booleanValue(order > 0);
    case '<=':
      return booleanValue(order <= 0);
    case '>=':
      return booleanValue(order >= 0);
  }
}

/** Yields an operand itself, not a boolean: `$["" | fallback]` is `fallback`. */
export function or(a: ExpressionValue, b: ExpressionValue): ExpressionValue {
  return isZeroOrEmpty(a) ? b : a;
}

export function and(a: ExpressionValue, b: ExpressionValue): ExpressionValue {
  return isZeroOrEmpty(a) || isZeroOrEmpty(b) ? ZERO : a;
}

export function conditional(test: ExpressionValue, then: ExpressionValue, otherwise: ExpressionValue): ExpressionValue {
  if (test.kind === 'string') {
    return test.text !== '' && test.text !== '""' && test.text !== '0' ? then : otherwise;
  }
  return toNumber(test) !== 0 ? then : otherwise;
}

export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';

export function arithmetic(operator: ArithmeticOperator, a: ExpressionValue, b: ExpressionValue): ExpressionValue {
  const left = toNumber(a);
  const right = toNumber(b);
  switch (operator) {
    case '+':
      if (left === undefined) return right === undefined ? ZERO : numberValue(right);
      return right === undefined ? numberValue(left) : numberValue(left + right);
    case '-':
      if (left === undefined) return right === undefined ? ZERO : numberValue(-right);
      return right === undefined ? numberValue(left) : numberValue(left - right);
    case '*':
      return left === undefined || right === undefined ? ZERO : numberValue(left * right);
    case '/':
      if (left === undefined) return ZERO;
      if (right === undefined || right === 0) return numberValue(INT_MAX);
      return numberValue(left / right);
    case '%':
      if (left === undefined || right === undefined) return ZERO;
      return right === 0 ? ZERO : numberValue(left % right);
  }
}

export function negate(a: ExpressionValue): ExpressionValue {
  const number = toNumber(a);
  return number === undefined ? ZERO : numberValue(-number);
}

/** `!`: strings go through atoi, so `!abc` is 1 just as in Asterisk. */
export function complement(a: ExpressionValue): ExpressionValue {
  if (a.kind === 'number') return booleanValue(a.number === 0);
  if (a.text === '' || a.text === '0') return booleanValue(true);
  return booleanValue(atoi(a.text) === 0);
}

function atoi(text: string): number {
  const match = /^\s*[+-]?\d+/.exec(text);
  return match ? Number.parseInt(match[0], 10) : 0;
}

/** Both operands of the string operators lose their double quotes if they are quoted. */
function unquoted(value: ExpressionValue): string {
  const text = toText(value);
  return text.length > 0 && text.startsWith('"') && text.endsWith('"') ? text.replaceAll('"', '') : text;
}

export function concatenate(a: ExpressionValue, b: ExpressionValue): ExpressionValue {
  return textValue(unquoted(a) + unquoted(b));
}

/**
 * `:` (anchored at the start) and `=~` (anywhere): the first capture group's text if the pattern
 * has groups, else the length of the match.
 */
export function regexMatch(subject: ExpressionValue, pattern: ExpressionValue, anchored: boolean): ExpressionValue {
  let regex: RegExp;
  try {
    regex = compileBoundedRegex(unquoted(pattern));
  } catch {
    return textValue('');
  }
  const groups = new RegExp(`${regex.source}|`, regex.flags).exec('')!.length - 1;
  const match = regex.exec(boundedSubject(unquoted(subject)));
  if (!match || (anchored && match.index !== 0)) return groups > 0 ? textValue('') : ZERO;
  return match[1] !== undefined ? textValue(match[1]) : numberValue(match[0].length);
}
