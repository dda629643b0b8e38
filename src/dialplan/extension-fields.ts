// The comma-separated fields of an `exten =>` / `same =>` value, read as pbx_config.c reads them.
import { syntaxError, type SourceLine } from '../config/conf/syntax-error.ts';

/**
 * Splits off the extension name at the first comma outside `[...]`, so character classes like
 * `_[1,2]XX` survive; a backslash protects the next character.
 */
export function splitExtensionName(value: string): [name: string, rest: string | undefined] {
  let brackets = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '[') brackets++;
    else if (ch === ']') brackets = Math.max(0, brackets - 1);
    else if (ch === '\\') i++;
    else if (ch === ',' && brackets === 0) return [value.slice(0, i), value.slice(i + 1)];
  }
  // An unclosed `[` would swallow the whole line; splitting plainly lets the pattern error surface.
  const comma = value.indexOf(',');
  return brackets > 0 && comma >= 0 ? [value.slice(0, comma), value.slice(comma + 1)] : [value, undefined];
}

/** Splits `name/callerid`; the caller ID part loses punctuation as ast_shrink_phone_number does. */
export function splitCallerId(spec: string): [name: string, callerId: string | undefined] {
  const slash = spec.indexOf('/');
  if (slash < 0) return [spec.trim(), undefined];
  const callerId = shrinkPhoneNumber(spec.slice(slash + 1).trim());
  return [spec.slice(0, slash).trim(), callerId === '' ? undefined : callerId];
}

function shrinkPhoneNumber(number: string): string {
  let result = '';
  let brackets = 0;
  for (let i = 0; i < number.length; i++) {
    const ch = number[i];
    if (ch === '[') brackets++;
    else if (ch === ']') brackets--;
    else if (ch === '-' && brackets === 0) continue;
    else if (ch === '.' && i < number.length - 1) continue;
    else if (ch === '(' || ch === ')' || ch === ' ') continue;
    result += ch;
  }
  return result;
}

export type PriorityBase =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'next' }
  | { readonly kind: 'same' }
  | { readonly kind: 'hint' }
  | { readonly kind: 'label'; readonly label: string };

export interface PriorityField {
  readonly base: PriorityBase;
  /** From `base+N`. */
  readonly offset: number;
  /** From `base(label)`. */
  readonly label?: string;
}

/** Reads `1`, `n`, `next`, `s`, `same`, `hint`, `label`, each optionally `+N` and/or `(label)`. */
export function parsePriorityField(field: string, at: SourceLine): PriorityField {
  let text = field.trim();
  let label: string | undefined;
  const open = text.indexOf('(');
  if (open >= 0) {
    const close = text.indexOf(')', open);
    if (close < 0) throw syntaxError(at, `label in priority '${text}' is missing its closing ')'`);
    if (text.slice(close + 1).trim() !== '') throw syntaxError(at, `unexpected text after label in priority '${text}'`);
    label = text.slice(open + 1, close).trim() || undefined;
    text = text.slice(0, open).trim();
  }

  let offset = 0;
  const plus = text.indexOf('+');
  if (plus >= 0) {
    const offsetText = text.slice(plus + 1).trim();
    if (!/^\d+$/.test(offsetText)) throw syntaxError(at, `invalid priority offset in '${field.trim()}'`);
    offset = Number(offsetText);
    text = text.slice(0, plus).trim();
  }

  if (text === '') throw syntaxError(at, 'missing priority');
  return { base: priorityBase(text, at), offset, label };
}

function priorityBase(text: string, at: SourceLine): PriorityBase {
  switch (text) {
    case 'hint':
      return { kind: 'hint' };
    case 'n':
    case 'next':
      return { kind: 'next' };
    case 's':
    case 'same':
      return { kind: 'same' };
  }
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < 1) throw syntaxError(at, `invalid priority '${text}': priorities start at 1`);
    return { kind: 'number', value };
  }
  if (/^-?\d/.test(text)) throw syntaxError(at, `invalid priority '${text}'`);
  return { kind: 'label', label: text };
}

export interface ApplicationCall {
  readonly app: string;
  readonly appData: string;
}

/**
 * Reads `App(args)` or a bare `App`. Arguments run to the last `)`, so they may contain parentheses.
 * A `${...}` before the first `(` means the application name itself is computed, and the whole
 * text is kept as the name, as Asterisk does.
 */
export function parseApplication(field: string, at: SourceLine): ApplicationCall {
  const text = field.trim();
  if (text === '') throw syntaxError(at, 'missing application');
  const open = text.indexOf('(');
  if (open < 0) return { app: text, appData: '' };

  const head = text.slice(0, open);
  if (head.includes('${') || head.includes('$[')) return { app: text, appData: '' };

  const close = text.lastIndexOf(')');
  if (close < open) throw syntaxError(at, `missing ')' after the arguments of ${head.trim() || 'the application'}`);
  if (text.slice(close + 1).trim() !== '') throw syntaxError(at, `unexpected text after ')': '${text.slice(close + 1).trim()}'`);
  const app = head.trim();
  if (app === '') throw syntaxError(at, 'missing application name before (');
  return { app, appData: text.slice(open + 1, close) };
}
