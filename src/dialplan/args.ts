// Asterisk's application-argument splitter (app.c's separate_args), also reused by the ARI layer
// for allowMultiple parameters, so the common case must not allocate more than String#split.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_PAREN = 0x28;
const CLOSE_PAREN = 0x29;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Characters that make a plain `String#split` give a different answer. */
const SPECIAL = /["\\([]/;

/**
 * Splits `text` on `delimiter` the way Asterisk splits application data: `"` toggles quoting and is
 * removed, `\x` yields a literal `x`, and delimiters inside quotes, `(...)` or `[...]` do not split.
 * With `limit`, at most that many values are produced and the last one is the raw, unprocessed
 * remainder, as Asterisk does when an application declares fewer arguments than were given.
 * An empty string yields one empty value.
 */
export function splitArgs(text: string, delimiter = ',', limit = Infinity): string[] {
  if (delimiter.length !== 1) {
    throw new RangeError(`splitArgs delimiter must be one character, got ${JSON.stringify(delimiter)}`);
  }
  if (limit === Infinity && !SPECIAL.test(text)) {
    return text.split(delimiter);
  }
  const delim = delimiter.charCodeAt(0);
  const values: string[] = [];
  let parens = 0;
  let brackets = 0;
  let quoted = false;
  // Text already taken from the current value when a quote or backslash had to be dropped.
  let taken = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (values.length === limit - 1) {
      values.push(text.slice(i));
      return values;
    }
    const c = text.charCodeAt(i);
    if (c === OPEN_PAREN) {
      parens++;
    } else if (c === CLOSE_PAREN) {
      if (parens > 0) parens--;
    } else if (c === OPEN_BRACKET) {
      brackets++;
    } else if (c === CLOSE_BRACKET) {
      if (brackets > 0) brackets--;
    } else if (c === QUOTE && delim !== QUOTE) {
      taken += text.slice(start, i);
      start = i + 1;
      quoted = !quoted;
    } else if (c === BACKSLASH) {
      taken += text.slice(start, i);
      start = i + 1;
      i++;
    } else if (c === delim && parens === 0 && brackets === 0 && !quoted) {
      values.push(taken + text.slice(start, i));
      taken = '';
      start = i + 1;
    }
  }
  values.push(taken + text.slice(start));
  return values;
}
