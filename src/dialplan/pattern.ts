// Extension names and `_` patterns: how they match dialed digits and how Asterisk orders them,
// which decides the winner when several patterns match.

/** `exact`: the dialed string is complete; `more`: more digits could still match; `any`: either. */
export type MatchMode = 'exact' | 'more' | 'any';

/** `early` means the pattern matched through a trailing `!`, which also matches nothing more. */
export type MatchOutcome = 'none' | 'full' | 'early';

type PatternElement =
  | { readonly kind: 'chars'; readonly members: ReadonlySet<number>; readonly sorted: readonly number[] }
  | { readonly kind: 'oneOrMore' }
  | { readonly kind: 'zeroOrMore' };

export interface ExtensionPattern {
  /** As stored: for literal names, without the `-` separators Asterisk treats as eye candy. */
  readonly name: string;
  /** Present only for names beginning with `_`. */
  readonly elements?: readonly PatternElement[];
}

/** Thrown for a pattern Asterisk could never match, such as an unclosed `[`. */
export class ExtensionPatternError extends Error {
  override name = 'ExtensionPatternError';
}

const DASH = 0x2d;

/** Removes `-` separators, except inside a pattern's `[...]` where they form ranges. */
export function stripSeparators(name: string): string {
  if (!name.includes('-')) return name;
  if (!name.startsWith('_')) return name.replaceAll('-', '');
  let result = '';
  let inSet = false;
  for (const ch of name) {
    if (ch === '[') inSet = true;
    else if (ch === ']') inSet = false;
    else if (ch === '-' && !inSet) continue;
    result += ch;
  }
  return result;
}

export function compileExtension(name: string): ExtensionPattern {
  const stripped = stripSeparators(name);
  if (!stripped.startsWith('_')) return { name: stripped };
  return { name: stripped, elements: compileElements(stripped) };
}

function range(from: string, to: string): number[] {
  const codes: number[] = [];
  for (let c = from.charCodeAt(0); c <= to.charCodeAt(0); c++) codes.push(c);
  return codes;
}

const DIGITS = range('0', '9');
const NONZERO = range('1', '9');
const TWO_TO_NINE = range('2', '9');

function charsElement(codes: Iterable<number>): PatternElement {
  const members = new Set(codes);
  return { kind: 'chars', members, sorted: [...members].sort((a, b) => a - b) };
}

function compileElements(pattern: string): PatternElement[] {
  const elements: PatternElement[] = [];
  for (let i = 1; i < pattern.length; i++) {
    const ch = pattern[i];
    switch (ch) {
      case 'X':
      case 'x':
        elements.push(charsElement(DIGITS));
        break;
      case 'Z':
      case 'z':
        elements.push(charsElement(NONZERO));
        break;
      case 'N':
      case 'n':
        elements.push(charsElement(TWO_TO_NINE));
        break;
      case '.':
        elements.push({ kind: 'oneOrMore' });
        break;
      case '!':
        elements.push({ kind: 'zeroOrMore' });
        break;
      case '[': {
        const end = pattern.indexOf(']', i + 1);
        if (end < 0) throw new ExtensionPatternError(`pattern '${pattern}' has '[' without a closing ']'`);
        const codes = setMembers(pattern.slice(i + 1, end));
        // Asterisk skips an empty set as if it were not written.
        if (codes.length > 0) elements.push(charsElement(codes));
        i = end;
        break;
      }
      default:
        elements.push(charsElement([pattern.charCodeAt(i)]));
    }
  }
  return elements;
}

/** `135-7` → 1, 3, 5, 6, 7; a `-` first or last in the set is literal. */
function setMembers(body: string): number[] {
  const codes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (i + 2 < body.length && body.charCodeAt(i + 1) === DASH) {
      codes.push(...range(body[i], body[i + 2]));
      i += 2;
    } else {
      codes.push(body.charCodeAt(i));
    }
  }
  return codes;
}

/**
 * Matches `dialed` (already without `-` separators) against an extension, following Asterisk:
 * `.` needs at least one more character, `!` accepts none, and in `more` mode a complete match
 * only counts if the extension could take further digits.
 */
export function matchDialed(extension: ExtensionPattern, dialed: string, mode: MatchMode): MatchOutcome {
  const elements = extension.elements;
  if (!elements) return matchLiteral(extension.name, dialed, mode);

  let e = 0;
  let d = 0;
  while (e < elements.length && d < dialed.length) {
    const element = elements[e];
    if (element.kind === 'oneOrMore') return 'full';
    if (element.kind === 'zeroOrMore') return 'early';
    if (!element.members.has(dialed.charCodeAt(d))) return 'none';
    e++;
    d++;
  }
  if (d < dialed.length) return 'none';
  if (e === elements.length) return mode === 'more' ? 'none' : 'full';
  if (elements[e].kind === 'zeroOrMore') return 'early';
  return mode === 'exact' ? 'none' : 'full';
}

function matchLiteral(name: string, dialed: string, mode: MatchMode): MatchOutcome {
  if (name.length < dialed.length) return 'none';
  if (mode === 'exact') return name === dialed ? 'full' : 'none';
  if (!name.startsWith(dialed)) return 'none';
  return mode === 'more' && name.length === dialed.length ? 'none' : 'full';
}

/** Where an element sits in Asterisk's ordering: any character set, then `.`, then `!`, then the end. */
function elementRank(element: PatternElement | undefined): number {
  if (!element) return 3;
  if (element.kind === 'chars') return 0;
  return element.kind === 'oneOrMore' ? 1 : 2;
}

function compareElements(a: PatternElement | undefined, b: PatternElement | undefined): number {
  const rankDifference = elementRank(a) - elementRank(b);
  if (rankDifference !== 0 || a?.kind !== 'chars' || b?.kind !== 'chars') return rankDifference;
  // Smaller sets are more specific; among equal sizes the set holding the lower character first wins.
  if (a.sorted.length !== b.sorted.length) return a.sorted.length - b.sorted.length;
  for (let i = 0; i < a.sorted.length; i++) {
    if (a.sorted[i] !== b.sorted[i]) return a.sorted[i] - b.sorted[i];
  }
  return 0;
}

/**
 * Asterisk's extension ordering (pbx.c's ext_cmp): literal names before patterns, and patterns
 * compared element by element so the more specific one sorts, and therefore matches, first.
 */
export function compareExtensions(a: ExtensionPattern, b: ExtensionPattern): number {
  if (!a.elements || !b.elements) {
    if (a.elements) return 1;
    if (b.elements) return -1;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  }
  const length = Math.max(a.elements.length, b.elements.length);
  for (let i = 0; i < length; i++) {
    const difference = compareElements(a.elements[i], b.elements[i]);
    if (difference !== 0) return difference;
  }
  return 0;
}
