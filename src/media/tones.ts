// Asterisk's tone-list syntax, as used in indications.conf and `tone:` media:
//   part[,part...]   part = [!]freq[+freq...][/duration_ms]  or  [!]freq*freq[/ms]
// `0` is silence, `M<n>` a MIDI note number, a missing duration means "play
// forever". The list loops back to its first part not marked `!`; when every
// part is marked `!` the tone ends after one pass.

export const MAX_TONE_FREQUENCIES = 4;
/** Parts in one list; the national tone plans use at most a dozen. */
export const MAX_TONE_PARTS = 64;
/**
 * Largest frequency (Hz) and duration (ms): Asterisk reads both as unsigned ints. A frequency
 * above the sample rate aliases, as it does in Asterisk.
 */
export const MAX_TONE_VALUE = 0xffffffff;

export interface TonePart {
  /** Hertz; 0 stands for silence. */
  readonly frequencies: readonly number[];
  /** 0 means play this part forever. */
  readonly durationMs: number;
  /** Marked `!`: excluded from repetition. */
  readonly once: boolean;
  /** `a*b`: carrier a amplitude-modulated by b instead of a sum. */
  readonly modulate: boolean;
}

export interface ToneList {
  readonly parts: readonly TonePart[];
  /** Index playback returns to after the last part; -1 to stop. */
  readonly repeatFrom: number;
}

const FREQUENCY = /^(?:M(\d{1,3})|(\d+(?:\.\d+)?))$/;
const DURATION = /^\d+$/;

function parseFrequency(text: string): number | undefined {
  const match = FREQUENCY.exec(text.trim());
  if (match === null) return undefined;
  if (match[1] !== undefined) {
    const note = Number(match[1]);
    return note > 127 ? undefined : 440 * Math.pow(2, (note - 69) / 12);
  }
  const frequency = Number(match[2]);
  return frequency <= MAX_TONE_VALUE ? frequency : undefined;
}

function parsePart(text: string): TonePart | undefined {
  let body = text.trim();
  const once = body.startsWith('!');
  if (once) body = body.slice(1);
  let durationMs = 0;
  const slash = body.indexOf('/');
  if (slash >= 0) {
    const durationText = body.slice(slash + 1).trim();
    if (!DURATION.test(durationText)) return undefined;
    durationMs = Number(durationText);
    if (durationMs > MAX_TONE_VALUE) return undefined;
    body = body.slice(0, slash);
  }
  const modulate = body.includes('*');
  const pieces = body.split(modulate ? '*' : '+');
  if (pieces.length > (modulate ? 2 : MAX_TONE_FREQUENCIES)) return undefined;
  const frequencies: number[] = [];
  for (const piece of pieces) {
    const frequency = parseFrequency(piece);
    if (frequency === undefined) return undefined;
    frequencies.push(frequency);
  }
  return { frequencies, durationMs, once, modulate };
}

/** Parts in a list's text, counted without splitting it. */
export function countToneParts(text: string): number {
  let parts = 1;
  for (let comma = text.indexOf(','); comma >= 0; comma = text.indexOf(',', comma + 1)) parts++;
  return parts;
}

/** Undefined when any part is malformed or there are more than MAX_TONE_PARTS. */
export function parseToneList(text: string): ToneList | undefined {
  if (text.trim() === '' || countToneParts(text) > MAX_TONE_PARTS) return undefined;
  const parts: TonePart[] = [];
  for (const partText of text.split(',')) {
    const part = parsePart(partText);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return { parts, repeatFrom: parts.findIndex((part) => !part.once) };
}

/** One part as Asterisk's ast_tone_zone_part_parse reads it: `f1[+f2][/ms]`, `f1*f2[/ms]`, `Mn[+Mn][/ms]`, `Mn*Mn[/ms]`. */
const ASTERISK_PART = /^!?\s*(?:\d{1,10}(?:[+*]\d{1,10})?|M\d{1,3}(?:[+*]M\d{1,3})?)(?:\/\d{1,10})?$/;

/**
 * A tone list written as Asterisk's ast_playtones_start reads it, made this module's: parts split at
 * `|` when the text has one, else at `,`, up to the first empty part (where Asterisk stops). Returns
 * the list, or the first part Asterisk could not parse (which it would skip at each play).
 */
export function asteriskToneList(text: string): { readonly list: string } | { readonly unparsable: string } {
  const parts: string[] = [];
  for (const raw of text.split(text.includes('|') ? '|' : ',')) {
    const part = raw.trim();
    if (part === '') break;
    if (!ASTERISK_PART.test(part)) return { unparsable: part };
    parts.push(part);
  }
  if (parts.length === 0) return { unparsable: text.trim() };
  return { list: parts.join(',') };
}
