// Caller ids as people write them in configuration and dialplan arguments (Originate's callerId,
// Dial's f(x) and o(x)), parsed as Asterisk's ast_callerid_parse.

const SHRINKABLE_NUMBER = /^[0-9*#+()\-. ]+$/;
const PHONE_NUMBER = /^[0-9*#+]+$/;

/** Drops the punctuation of a number written for people (`+1 (555) 123-4567` → `+15551234567`). */
function shrinkNumber(number: string): string {
  return SHRINKABLE_NUMBER.test(number) ? number.replace(/[()\-. ]/g, '') : number;
}

/**
 * Parses a caller id as Asterisk's ast_callerid_parse does: `"name" <number>`, `name <number>`,
 * `<number>`, a bare number, or a bare name.
 */
export function parseCallerId(text: string): { name: string; number: string } {
  const open = text.lastIndexOf('<');
  const close = text.lastIndexOf('>');
  if (open >= 0 && close > open) {
    const name = text.slice(0, open).trim().replace(/^"(.*)"$/, '$1').trim();
    return { name, number: shrinkNumber(text.slice(open + 1, close).trim()) };
  }
  const trimmed = text.trim();
  const shrunk = shrinkNumber(trimmed);
  if (shrunk !== '' && PHONE_NUMBER.test(shrunk)) return { name: '', number: shrunk };
  return { name: trimmed.replace(/^"(.*)"$/, '$1'), number: '' };
}
