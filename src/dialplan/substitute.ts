// `${...}` and `$[...]` substitution in application data, as pbx_variables.c performs it.
import { evaluateExpression, type FunctionResolver } from './expression.ts';

export type { FunctionResolver } from './expression.ts';

/** Looks up a variable; `undefined` when it is not set (substituted as nothing). */
export type VariableResolver = (name: string) => string | undefined;

const DOLLAR = 0x24;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const COLON = 0x3a;

/**
 * Expands `${VAR}`, `${VAR:offset:length}`, `${FUNC(args)}` (also with offset/length) and
 * `$[expression]`, innermost first. Unset variables and unknown functions expand to nothing; an
 * expression that fails to parse yields `0`, as in Asterisk.
 */
export function substitute(text: string, resolveVariable: VariableResolver, resolveFunction?: FunctionResolver): string {
  if (!text.includes('$')) return text;
  let result = '';
  let position = 0;
  while (position < text.length) {
    const dollar = text.indexOf('$', position);
    if (dollar < 0) break;
    const opener = text.charCodeAt(dollar + 1);
    if (opener !== OPEN_BRACE && opener !== OPEN_BRACKET) {
      result += text.slice(position, dollar + 1);
      position = dollar + 1;
      continue;
    }
    result += text.slice(position, dollar);
    const body = readBody(text, dollar + 2, opener === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET);
    position = body.end;
    const inner = body.nested ? substitute(body.text, resolveVariable, resolveFunction) : body.text;
    result +=
      opener === OPEN_BRACE
        ? expandReference(inner, resolveVariable, resolveFunction)
        : expandExpression(inner, resolveFunction);
  }
  return result + text.slice(position);
}

interface Body {
  readonly text: string;
  /** Index just past the closing delimiter (or the end of the text if it never closes). */
  readonly end: number;
  /** Whether the body holds further `${` or `$[` to expand first. */
  readonly nested: boolean;
}

/** Finds the matching `}` or `]`; an unclosed reference runs to the end of the text, as Asterisk lets it. */
function readBody(text: string, start: number, close: number): Body {
  const open = close === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET;
  let depth = 1;
  let nested = false;
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === DOLLAR) {
      const next = text.charCodeAt(i + 1);
      if (next === OPEN_BRACE || next === OPEN_BRACKET) {
        nested = true;
        if (next === open) depth++;
        i += 2;
        continue;
      }
    } else if (c === open) {
      depth++;
    } else if (c === close) {
      depth--;
      if (depth === 0) return { text: text.slice(start, i), end: i + 1, nested };
    }
    i++;
  }
  return { text: text.slice(start), end: text.length, nested };
}

function expandReference(reference: string, resolveVariable: VariableResolver, resolveFunction?: FunctionResolver): string {
  const { name, offset, length, isFunction } = splitReference(reference);
  const value = isFunction ? callFunction(name, resolveFunction) : resolveVariable(name);
  return value === undefined ? '' : substring(value, offset, length);
}

function expandExpression(expression: string, resolveFunction?: FunctionResolver): string {
  try {
    return evaluateExpression(expression, resolveFunction);
  } catch {
    return '0';
  }
}

function callFunction(call: string, resolveFunction?: FunctionResolver): string | undefined {
  if (!resolveFunction) return undefined;
  const open = call.indexOf('(');
  const close = call.lastIndexOf(')');
  const args = close > open ? call.slice(open + 1, close) : call.slice(open + 1);
  return resolveFunction(call.slice(0, open), args);
}

interface Reference {
  readonly name: string;
  readonly offset: number;
  readonly length: number;
  readonly isFunction: boolean;
}

/** Splits `NAME:offset:length`; a colon inside a function's parentheses belongs to its arguments. */
function splitReference(reference: string): Reference {
  let parens = 0;
  let isFunction = false;
  for (let i = 0; i < reference.length; i++) {
    const c = reference.charCodeAt(i);
    if (c === OPEN_PAREN) {
      isFunction = true;
      parens++;
    } else if (c === CLOSE_PAREN) {
      parens--;
    } else if (c === COLON && parens === 0) {
      const { offset, length } = parseRange(reference.slice(i + 1));
      return { name: reference.slice(0, i), offset, length, isFunction };
    }
  }
  return { name: reference, offset: 0, length: Infinity, isFunction };
}

const RANGE = /^\s*([+-]?\d+)(?::\s*([+-]?\d+))?/;

/** Like sscanf("%d:%d"): whatever does not parse keeps its default. */
function parseRange(text: string): { offset: number; length: number } {
  const match = RANGE.exec(text);
  if (!match) return { offset: 0, length: Infinity };
  return { offset: Number(match[1]), length: match[2] === undefined ? Infinity : Number(match[2]) };
}

/**
 * A negative offset counts from the end; a negative length leaves that many characters off the
 * end; out-of-range values clamp rather than fail.
 */
export function substring(value: string, offset: number, length: number): string {
  const size = value.length;
  if (offset === 0 && length >= size) return value;
  const start = offset < 0 ? Math.max(0, size + offset) : offset;
  if (start >= size) return '';
  if (length >= 0) return value.slice(start, start + length);
  const end = size + length;
  return end > start ? value.slice(start, end) : '';
}
