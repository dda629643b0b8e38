// Regular expressions written in a dialplan (REGEX(), `=~`) run on the server's one thread, so a
// pattern such as `(a+)+$` must not be able to stall it. V8's linear-time engine (the `l` flag,
// enabled here once) guarantees matching in time proportional to the input; where it is not
// available, patterns with nested or stacked repetition are refused instead. Either way pattern
// and input lengths are capped.
import { setFlagsFromString } from 'node:v8';

/** Longest pattern accepted, in characters. */
export const MAX_REGEX_PATTERN_LENGTH = 512;
/** Longest subject matched, in characters. */
export const MAX_REGEX_SUBJECT_LENGTH = 8192;

function linearEngineAvailable(): boolean {
  try {
    setFlagsFromString('--enable-experimental-regexp-engine');
    return new RegExp('a', 'l').flags.includes('l');
  } catch {
    return false;
  }
}

/** Whether V8's linear-time engine is on (it is in the Node versions Patchbay supports). */
export const LINEAR = linearEngineAvailable();

const POSIX_CLASSES: ReadonlyMap<string, string> = new Map([
  ['alnum', 'A-Za-z0-9'],
  ['alpha', 'A-Za-z'],
  ['blank', ' \\t'],
  ['cntrl', '\\x00-\\x1f\\x7f'],
  ['digit', '0-9'],
  ['graph', '!-~'],
  ['lower', 'a-z'],
  ['print', ' -~'],
  ['punct', '!-/:-@\\[-`{-~'],
  ['space', ' \\t\\r\\n\\v\\f'],
  ['upper', 'A-Z'],
  ['xdigit', '0-9A-Fa-f'],
]);

/** POSIX extended regular expressions are JavaScript's except for `[[:class:]]`. */
export function fromPosixClasses(pattern: string): string {
  return pattern.replace(/\[:([a-z]+):\]/g, (whole, name: string) => POSIX_CLASSES.get(name) ?? whole);
}

/** A quantifier after a group that itself repeats or alternates: the shapes that backtrack exponentially. */
const NESTED_REPETITION = /\((?:[^()\\]|\\.)*(?:[*+}|])(?:[^()\\]|\\.)*\)\s*(?:[*+]|\{\d*,)/;

export class BoundedRegexError extends Error {
  override name = 'BoundedRegexError';
}

/**
 * Compiles a POSIX extended regular expression safely. Throws BoundedRegexError when it is too
 * long, invalid, or (without the linear engine) shaped for catastrophic backtracking.
 */
export function compileBoundedRegex(pattern: string, flags = '', linear = LINEAR): RegExp {
  if (pattern.length > MAX_REGEX_PATTERN_LENGTH) {
    throw new BoundedRegexError(`regular expression longer than ${MAX_REGEX_PATTERN_LENGTH} characters`);
  }
  const source = fromPosixClasses(pattern);
  // Look-around is no part of POSIX regular expressions (Asterisk's REGEX uses regcomp), and the
  // linear engine runs look-behind on Node 22 and later but not on 20: refused on every version,
  // so a dialplan means the same whichever Node runs it.
  if (/(^|[^\\])\(\?<?[=!]/.test(source)) throw new BoundedRegexError('look-around ((?=, (?!, (?<=, (?<!) is not part of POSIX regular expressions; refused');
  try {
    if (linear) return new RegExp(source, `${flags}l`);
  } catch (error) {
    throw new BoundedRegexError(`invalid regular expression: ${(error as Error).message}`);
  }
  if (NESTED_REPETITION.test(source) || /\\[1-9]/.test(source)) {
    throw new BoundedRegexError('regular expression with nested repetition or back-references refused');
  }
  try {
    return new RegExp(source, flags);
  } catch (error) {
    throw new BoundedRegexError(`invalid regular expression: ${(error as Error).message}`);
  }
}

/** The subject cut to MAX_REGEX_SUBJECT_LENGTH, so the match time stays bounded. */
export function boundedSubject(subject: string): string {
  return subject.length > MAX_REGEX_SUBJECT_LENGTH ? subject.slice(0, MAX_REGEX_SUBJECT_LENGTH) : subject;
}
