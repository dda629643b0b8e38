// Call groups and pickup groups (Asterisk's ast_group_t and named groups): which ringing channels
// a channel may pick up. A picker's pickup groups meet a ringing channel's call groups when they
// share a number (0–63) or a name. The numbers are a 64-bit mask, as Asterisk keeps them; the names
// are bounded because they come from configuration and from the dialplan (CHANNEL(namedcallgroup)).

/** The highest group number (ast_get_group ignores the others). */
const MAX_GROUP = 63;
/** Named groups one set holds, and the longest name: a dialplan cannot grow a channel without end. */
export const MAX_NAMED_GROUPS = 64;
const MAX_GROUP_NAME = 80;

/** The four group sets of a channel (Asterisk: callgroup, pickupgroup, namedcallgroup, namedpickupgroup). */
export interface CallGroups {
  callGroup: bigint;
  pickupGroup: bigint;
  namedCallGroups: readonly string[];
  namedPickupGroups: readonly string[];
}

export const NO_GROUPS: Readonly<CallGroups> = Object.freeze({ callGroup: 0n, pickupGroup: 0n, namedCallGroups: [], namedPickupGroups: [] });

/**
 * `1,3-5` as ast_get_group reads it: numbers and ranges, comma-separated; a piece that is not a
 * number is skipped (`problems` names it), as is a number outside 0–63.
 */
export function parseGroupNumbers(text: string, problems?: string[]): bigint {
  let mask = 0n;
  for (const raw of text.split(',')) {
    const piece = raw.trim();
    if (piece === '') continue;
    const match = /^(-?\d{1,30})(?:\s*-\s*(-?\d{1,30}))?/.exec(piece);
    if (!match) {
      problems?.push(`syntax error in group ${JSON.stringify(piece.slice(0, 40))}; ignored`);
      continue;
    }
    const start = Number(match[1]);
    const finish = match[2] === undefined ? start : Number(match[2]);
    if (start < 0 || finish > MAX_GROUP) problems?.push(`group ${piece.slice(0, 40)} goes beyond 0-${MAX_GROUP}; the numbers outside are ignored`);
    for (let group = Math.max(0, start); group <= Math.min(MAX_GROUP, finish); group++) mask |= 1n << BigInt(group);
  }
  return mask;
}

/** A mask as ast_print_group writes it: `1, 3, 4, 5`. */
export function formatGroupNumbers(mask: bigint): string {
  const numbers: number[] = [];
  for (let group = 0; group <= MAX_GROUP; group++) if (mask & (1n << BigInt(group))) numbers.push(group);
  return numbers.join(', ');
}

/**
 * Group names as ast_get_namedgroups reads them: comma-separated, trimmed, each once (a repeat
 * moves to the end, as Asterisk unlinks and links it again); bounded in count and length here.
 */
export function parseGroupNames(text: string, problems?: string[]): string[] {
  const names: string[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    // eslint-disable-next-line no-control-regex
    if (name.length > MAX_GROUP_NAME || /[\x00-\x1f\x7f]/.test(name)) {
      problems?.push(`group name ${JSON.stringify(name.slice(0, 40))} is not 1 to ${MAX_GROUP_NAME} printable characters; ignored`);
      continue;
    }
    const at = names.indexOf(name);
    if (at >= 0) names.splice(at, 1);
    else if (names.length >= MAX_NAMED_GROUPS) {
      problems?.push(`more than ${MAX_NAMED_GROUPS} group names; the rest are ignored`);
      break;
    }
    names.push(name);
  }
  return names;
}

/** Names as ast_print_namedgroups writes them, `a, b`. */
export const formatGroupNames = (names: readonly string[]): string => names.join(', ');

/** Whether `picker` may pick up `target` by group (pickup.c's find_channel_by_group). */
export function groupsMeet(picker: Readonly<CallGroups>, target: Readonly<CallGroups>): boolean {
  if ((picker.pickupGroup & target.callGroup) !== 0n) return true;
  return picker.namedPickupGroups.some((name) => target.namedCallGroups.includes(name));
}
