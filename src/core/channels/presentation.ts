// A party's presentation: whether its name and number may be shown, Asterisk's AST_PRES_* values
// (main/callerid.c's table of names and descriptions, main/channel.c's combined value).
//
// A party keeps its name's and its number's presentation packed in one small integer
// (`name << 8 | number`), so that a channel holds its caller's and connected party's as two plain
// numbers: the default, 0, is both allowed and not screened, and costs no object.

/** The bits that say allowed (0x00), restricted (0x20) or unavailable (0x40). */
const RESTRICTION = 0x60;
const RESTRICTED = 0x20;
const UNAVAILABLE = 0x40;
/** The bits that say how the number was screened. */
const SCREENING = 0x03;

export const PRES_ALLOWED_NOT_SCREENED = 0x00;
export const PRES_PROHIB_NOT_SCREENED = 0x20;
/** The screening bits of a number that passed screening (RPID's `screen=yes`). */
export const PRES_PASSED_SCREEN = 0x01;
/** Asterisk's AST_PRES_NUMBER_NOT_AVAILABLE: what `unavailable` is parsed as. */
export const PRES_UNAVAILABLE = 0x43;

/** A party's name and number presentation, packed (see above). */
export type PartyPresentation = number;

/** The default: name and number allowed, not screened. */
export const PRESENTATION_ALLOWED: PartyPresentation = 0;

/** Asterisk's values, names and descriptions, in its order (the first of a name is what it parses to). */
const VALUES: ReadonlyArray<readonly [number, string, string]> = [
  [0x00, 'allowed_not_screened', 'Presentation Allowed, Not Screened'],
  [0x01, 'allowed_passed_screen', 'Presentation Allowed, Passed Screen'],
  [0x02, 'allowed_failed_screen', 'Presentation Allowed, Failed Screen'],
  [0x03, 'allowed', 'Presentation Allowed, Network Number'],
  [0x20, 'prohib_not_screened', 'Presentation Prohibited, Not Screened'],
  [0x21, 'prohib_passed_screen', 'Presentation Prohibited, Passed Screen'],
  [0x22, 'prohib_failed_screen', 'Presentation Prohibited, Failed Screen'],
  [0x23, 'prohib', 'Presentation Prohibited, Network Number'],
  [0x43, 'unavailable', 'Number Unavailable'],
  [0x40, 'unavailable', 'Number Unavailable'],
  [0x42, 'unavailable', 'Number Unavailable'],
  [0x41, 'unavailable', 'Number Unavailable'],
];

/**
 * A presentation as the dialplan and pjsip.conf write it: one of the names (any case), or a
 * number when the text starts with a digit (read as C's atoi does, kept to one octet). Undefined
 * for anything else: the caller leaves the value unchanged, as Asterisk does.
 */
export function parsePresentation(text: string): number | undefined {
  const value = text.trim();
  const digits = /^[0-9]{1,9}/.exec(value);
  if (digits) return Number(digits[0]) & 0xff;
  const lower = value.toLowerCase();
  return VALUES.find(([, name]) => name === lower)?.[0];
}

/** The name of a presentation value (`unknown` for one Asterisk has no name for). */
export function presentationName(value: number): string {
  for (const [known, name] of VALUES) if (known === value) return name;
  return 'unknown';
}

/** The description ARI's ChannelCallerId carries (`unknown` for one Asterisk has no name for). */
export function describePresentation(value: number): string {
  for (const [known, , description] of VALUES) if (known === value) return description;
  return 'unknown';
}

/** Both the name's and the number's presentation set to `value` (CALLERID(pres), callerid_privacy). */
export function bothPresentation(value: number): PartyPresentation {
  return ((value & 0xff) << 8) | (value & 0xff);
}

export function namePresentation(party: PartyPresentation): number {
  return (party >> 8) & 0xff;
}

export function numberPresentation(party: PartyPresentation): number {
  return party & 0xff;
}

export function withNamePresentation(party: PartyPresentation, value: number): PartyPresentation {
  return ((value & 0xff) << 8) | (party & 0xff);
}

export function withNumberPresentation(party: PartyPresentation, value: number): PartyPresentation {
  return (party & 0xff00) | (value & 0xff);
}

/**
 * The party's one presentation, as ast_party_id_presentation combines the two: the more private
 * of name and number decides (restricted before allowed before unavailable), with the number's
 * screening. A part that is not valid (Patchbay keeps no flag: its text is empty, what
 * `name-valid`/`num-valid` read) ranks last as unavailable, so a party with neither name nor
 * number is `unavailable`, as Asterisk's channel without a caller id; by default both count.
 */
export function combinedPresentation(party: PartyPresentation, nameValid = true, numberValid = true): number {
  const name = namePresentation(party);
  const number = numberPresentation(party);
  const nameRank = nameValid ? rank(name & RESTRICTION) : 3;
  const numberRank = numberValid ? rank(number & RESTRICTION) : 3;
  // An unknown restriction value counts as unavailable, unscreened.
  const numberValue = numberRank === 3 ? UNAVAILABLE : number & RESTRICTION;
  const screening = numberRank === 3 ? 0 : number & SCREENING;
  const value = nameRank < numberRank ? (nameRank === 3 ? UNAVAILABLE : name & RESTRICTION) : numberValue;
  return value === UNAVAILABLE ? PRES_UNAVAILABLE : value | screening;
}

/** Whether the party's number passed screening, as its combined value says. */
export function passedScreen(party: PartyPresentation): boolean {
  return (combinedPresentation(party) & SCREENING) === PRES_PASSED_SCREEN;
}

/** Whether the party may not be shown (restricted or unavailable), as res_pjsip reads it. */
export function isRestricted(party: PartyPresentation): boolean {
  return (combinedPresentation(party) & RESTRICTION) !== 0;
}

function rank(restriction: number): number {
  if (restriction === RESTRICTED) return 0;
  if (restriction === 0) return 1;
  if (restriction === UNAVAILABLE) return 2;
  return 3;
}
