// Say-back: the prompt sequences behind the `digits:`, `number:` and `characters:` media URIs,
// built the way Asterisk's main/say.c builds them for English. The builders are pure: they return
// sound ids (`digits/1`, `letters/a`, ...) and the playback engine turns them into audio.

/** Tells whether a prompt exists in the playback's language (say.c checks before streaming). */
export type PromptExists = (id: string) => boolean;

/**
 * `digits:` (ast_say_digit_str): each digit as `digits/N`, `*` as `digits/star`, `#` as
 * `digits/pound`, `-` as `digits/minus`. Other characters, and prompts that do not exist, are
 * skipped, as say.c does.
 */
export function sayDigits(text: string, exists: PromptExists = () => true): string[] {
  const prompts: string[] = [];
  for (const character of text) {
    let id: string | undefined;
    if (character >= '0' && character <= '9') id = `digits/${character}`;
    else if (character === '*') id = 'digits/star';
    else if (character === '#') id = 'digits/pound';
    else if (character === '-') id = 'digits/minus';
    if (id && exists(id)) prompts.push(id);
  }
  return prompts;
}

/** Symbols with a prompt of their own in say.c (the others fall back to `letters/ascii<code>`). */
const SYMBOL_PROMPTS: Readonly<Record<string, string>> = {
  '*': 'digits/star',
  '#': 'digits/pound',
  '!': 'letters/exclaimation-point', // sic: the prompt's file name
  '@': 'letters/at',
  $: 'letters/dollar',
  '-': 'letters/dash',
  '.': 'letters/dot',
  '=': 'letters/equals',
  '+': 'letters/plus',
  '/': 'letters/slash',
  ' ': 'letters/space',
};

/**
 * `characters:` (ast_say_character_str, case not spoken): letters as `letters/<lower-case>`,
 * digits as `digits/N`, the symbols above by name; anything else as `letters/ascii<code>` when that
 * prompt exists. A character with no existing prompt is skipped.
 */
export function sayCharacters(text: string, exists: PromptExists = () => true): string[] {
  const prompts: string[] = [];
  for (const character of text) {
    let id: string;
    const symbol = SYMBOL_PROMPTS[character];
    if (symbol) id = symbol;
    else if (character >= '0' && character <= '9') id = `digits/${character}`;
    else id = `letters/${character.toLowerCase()}`;
    if (exists(id)) {
      prompts.push(id);
      continue;
    }
    const ascii = `letters/ascii${character.codePointAt(0)}`;
    if (exists(ascii)) prompts.push(ascii);
  }
  return prompts;
}

const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);

/**
 * Reads the number of a `number:` URI as sscanf("%d") does: optional leading blanks and sign, then
 * digits; anything after them is ignored. Undefined when there is no number or it does not fit a
 * 32-bit int.
 */
export function parseSayNumber(text: string): number | undefined {
  const match = /^\s*([+-]?\d+)/.exec(text);
  if (!match) return undefined;
  const value = Number.parseInt(match[1], 10);
  if (!Number.isSafeInteger(value) || value > INT_MAX || value < INT_MIN) return undefined;
  return value;
}

/**
 * `number:` (ast_say_number_full_en): `digits/minus` for a negative number; below 20 one prompt;
 * tens as `digits/20`..`digits/90` then the unit; hundreds as `digits/N` `digits/hundred`; then
 * thousands, millions and billions, each group said recursively and followed by its word. Zero is
 * `digits/0`.
 */
export function sayNumber(value: number): string[] {
  if (!Number.isInteger(value)) throw new RangeError(`not an integer: ${value}`);
  if (value === 0) return ['digits/0'];
  const prompts: string[] = [];
  let num = value;
  let hundred = false;
  while (num !== 0 || hundred) {
    if (num < 0) {
      prompts.push('digits/minus');
      num = num > INT_MIN ? -num : 0;
    } else if (hundred) {
      prompts.push('digits/hundred');
      hundred = false;
    } else if (num < 20) {
      prompts.push(`digits/${num}`);
      num = 0;
    } else if (num < 100) {
      prompts.push(`digits/${Math.floor(num / 10) * 10}`);
      num %= 10;
    } else if (num < 1000) {
      prompts.push(`digits/${Math.floor(num / 100)}`);
      hundred = true;
      num %= 100;
    } else if (num < 1_000_000) {
      prompts.push(...sayNumber(Math.floor(num / 1000)), 'digits/thousand');
      num %= 1000;
    } else if (num < 1_000_000_000) {
      prompts.push(...sayNumber(Math.floor(num / 1_000_000)), 'digits/million');
      num %= 1_000_000;
    } else {
      prompts.push(...sayNumber(Math.floor(num / 1_000_000_000)), 'digits/billion');
      num %= 1_000_000_000;
    }
  }
  return prompts;
}
