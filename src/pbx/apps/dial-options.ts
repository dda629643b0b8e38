// Dial()'s option string: how it splits (app_dial's letters, each with an optional `(argument)`),
// which letters Patchbay acts on, and which it does not. A configuration written for Asterisk
// must say what it will not get: every letter Patchbay does not act on is named once per dialplan
// line, at load (the dialplan check asks `checkData`) and at run (a letter only a variable gave).
import { splitArgs } from '../../dialplan/args.ts';
import type { FeatureName } from '../../core/features-conf.ts';

/** The letters Dial() acts on, with what the docs say of each. */
export const IMPLEMENTED_DIAL_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['A', 'A(x[:y]): file x played to the callee and y to the caller when the callee answers, before the bridge'],
  ['a', 'a: the caller is answered when the callee answers (Patchbay always does so)'],
  ['B', 'B(context^exten^priority[(args)]): a pre-dial handler on the caller, before the callees are created'],
  ['b', 'b(context^exten^priority[(args)]): a pre-dial handler on each callee'],
  ['C', "C: the caller's call records are reset (times start again) before the callees are dialed"],
  ['c', 'c: callees cancelled because the caller gave up are hung up "answered elsewhere" (26)'],
  ['D', 'D([called][:calling][:progress]): DTMF to the callee and the caller at the answer, to the callee at its progress'],
  ['e', "e: the callee runs the h extension of the caller's context when the call ends"],
  ['F', "F[(context^exten^priority)]: a callee still up when the caller hangs up goes on at the caller's next priority (or there)"],
  ['f', "f[(x)]: the callee is sent caller id x (name <number>) instead of the caller's; f alone sends a forward's channel the dialed extension"],
  ['G', 'G(context^exten^priority): at the answer the caller goes there and the callee to the next priority; they are not bridged'],
  ['g', 'g: the caller goes on in the dialplan after the callee hangs up'],
  ['H', 'H: the caller may hang up the call with the disconnect code of features.conf ([featuremap] disconnect, * by default)'],
  ['h', 'h: the callee may hang up the call with the disconnect code of features.conf ([featuremap] disconnect, * by default)'],
  ['I', 'I: the caller is not told whom it calls (no connected-line update) while the callee rings'],
  ['i', 'i: call forwards are not followed'],
  ['L', 'L(x[:y[:z]]): the answered call lasts x ms at most; LIMIT_WARNING_FILE y ms before the end, every z ms; LIMIT_CONNECT_FILE, LIMIT_TIMEOUT_FILE'],
  ['m', 'm[(class)]: music on hold to the caller instead of ringing until a callee answers'],
  ['o', "o[(x)]: the callee's own caller id (what the caller sees it as) is x, or the caller's caller id, instead of the dialed extension"],
  ['Q', 'Q(cause): the cause the other callees are hung up with when one answers'],
  ['r', 'r[(tone)]: ringing (or a tone of the zone) to the caller at once'],
  ['S', 'S(x): the callee is hung up x seconds after it answers'],
  ['T', 'T: the caller may blind-transfer the callee with the blindxfer code of features.conf (# by default); atxfer is not implemented'],
  ['t', 't: the callee may blind-transfer the caller with the blindxfer code of features.conf (# by default); atxfer is not implemented'],
  ['U', 'U(context[^arg...]): a subroutine on the callee before the bridge; its GOSUB_RESULT (BUSY, CONGESTION, CHANUNAVAIL, CONTINUE, ABORT, GOTO:) decides'],
  ['W', 'W: the caller may use one-touch recording (automon): Asterisk 22 has no automon any more, so the code does nothing and its digits cross, as there'],
  ['w', 'w: the callee may use one-touch recording (automon): Asterisk 22 has no automon any more, so the code does nothing and its digits cross, as there'],
  ['z', 'z: a call forward followed cancels the dial timeout'],
]);

/** Why a letter of app_dial is not acted on (named once per dialplan line). */
const REASONS: ReadonlyMap<string, string> = new Map([
  ['k', 'call parking by DTMF (parkcall) is not supported'],
  ['K', 'call parking by DTMF (parkcall) is not supported'],
  ['x', 'one-touch MixMonitor recording by DTMF (automixmon) is not supported'],
  ['X', 'one-touch MixMonitor recording by DTMF (automixmon) is not supported'],
  ['n', 'call screening and privacy are not supported'],
  ['N', 'call screening and privacy are not supported'],
  ['p', 'call screening and privacy are not supported'],
  ['P', 'call screening and privacy are not supported'],
]);

/** Every option letter app_dial (Asterisk 22) knows; any other letter is unknown to both. */
const ASTERISK_LETTERS = 'AabBCcdDEefFgGhHiIjkKLmnNoOpPQrRSstTuUwWxXz';

/** Splits Dial's option string: single letters, each optionally followed by `(arguments)`. */
export function parseDialOptions(text: string): Map<string, string> {
  const options = new Map<string, string>();
  for (let i = 0; i < text.length; i++) {
    const letter = text[i];
    if (letter.trim() === '') continue;
    let argument = '';
    if (text[i + 1] === '(') {
      // The matching parenthesis: b(handler^s^1(arg1^arg2)) nests one.
      let depth = 0;
      let close = -1;
      for (let j = i + 1; j < text.length && close < 0; j++) {
        if (text[j] === '(') depth++;
        else if (text[j] === ')' && --depth === 0) close = j;
      }
      const end = close < 0 ? text.length : close;
      argument = text.slice(i + 2, end);
      i = end;
    }
    options.set(letter, argument);
  }
  return options;
}

/** One sentence per letter of `options` that Dial() does not act on. */
export function unsupportedDialOptions(options: ReadonlyMap<string, string>): string[] {
  const lines: string[] = [];
  for (const letter of options.keys()) {
    if (IMPLEMENTED_DIAL_OPTIONS.has(letter)) continue;
    const reason = REASONS.get(letter);
    if (reason) lines.push(`Dial option '${letter}' is not supported: ${reason}`);
    else if (ASTERISK_LETTERS.includes(letter)) lines.push(`Dial option '${letter}' is not implemented and is ignored`);
    else lines.push(`Dial option '${letter}' is unknown (app_dial has no such option) and is ignored`);
  }
  return lines;
}

/**
 * What the load-time check says of a Dial() line's data: its options as written (a letter inside
 * `${...}` is only known at run, when the run-time warning names it).
 */
export function checkDialData(data: string): string[] {
  const optionText = splitArgs(data)[2] ?? '';
  if (optionText.includes('$')) return [];
  return unsupportedDialOptions(parseDialOptions(optionText));
}

/** Dialplan lines whose unsupported options were named at run (bounded: a dialplan has so many lines). */
const namedAtRun = new Set<string>();
const NAMED_AT_RUN_LIMIT = 10_000;

/**
 * The lines to log for this run of a Dial() line: each unsupported option once per line (its
 * context, extension, priority and option text), as the dialplan check names it at load.
 */
export function unsupportedAtRun(where: string, optionText: string, options: ReadonlyMap<string, string>): string[] {
  const lines = unsupportedDialOptions(options);
  if (lines.length === 0) return lines;
  const key = `${where}\u0000${optionText.slice(0, 256)}`;
  if (namedAtRun.has(key)) return [];
  if (namedAtRun.size >= NAMED_AT_RUN_LIMIT) namedAtRun.clear();
  namedAtRun.add(key);
  return lines;
}

/** Cause names app_dial's Q() reads (ast_str2cause), the common ones. */
const CAUSE_NAMES: ReadonlyMap<string, number> = new Map([
  ['UNALLOCATED', 1],
  ['NO_ROUTE_DESTINATION', 3],
  ['NORMAL_CLEARING', 16],
  ['USER_BUSY', 17],
  ['NO_USER_RESPONSE', 18],
  ['NO_ANSWER', 19],
  ['SUBSCRIBER_ABSENT', 20],
  ['CALL_REJECTED', 21],
  ['ANSWERED_ELSEWHERE', 26],
  ['DESTINATION_OUT_OF_ORDER', 27],
  ['NORMAL_UNSPECIFIED', 31],
  ['NORMAL_CIRCUIT_CONGESTION', 34],
  ['NORMAL_TEMPORARY_FAILURE', 41],
]);

/**
 * Q(cause): the cause the losing callees are hung up with when one answers — a name, a number,
 * or NONE (0); undefined when the text is none of these (app_dial warns and keeps its default).
 */
export function parseHangupCause(text: string): number | undefined {
  const word = text.trim().toUpperCase();
  if (word === 'NONE') return 0;
  const named = CAUSE_NAMES.get(word);
  if (named !== undefined) return named;
  if (!/^\d{1,3}$/.test(word)) return undefined;
  const cause = Number(word);
  return cause <= 127 ? cause : undefined;
}

/** The feature each Dial() / BRIDGE_FEATURES letter gives (upper case: the caller; lower: the callee). */
const FEATURE_OF_LETTER: ReadonlyMap<string, readonly FeatureName[]> = new Map<string, readonly FeatureName[]>([
  ['t', ['blindxfer', 'atxfer']],
  ['h', ['disconnect']],
  ['x', ['automixmon']],
  ['w', ['automon']],
  ['k', ['parkcall']],
]);

/**
 * The in-call features the caller and the callee may use: Dial()'s letters, then the caller's
 * BRIDGE_FEATURES (as Asterisk's pre-bridge set-up adds its letters to the same flags).
 */
export function dialFeatureRights(options: ReadonlyMap<string, string>, bridgeFeatures: string | undefined): { caller: Set<FeatureName>; callee: Set<FeatureName> } {
  const caller = new Set<FeatureName>();
  const callee = new Set<FeatureName>();
  const add = (letter: string): void => {
    const names = FEATURE_OF_LETTER.get(letter.toLowerCase());
    if (!names) return;
    const party = letter === letter.toUpperCase() ? caller : callee;
    for (const name of names) party.add(name);
  };
  for (const letter of options.keys()) add(letter);
  for (const letter of (bridgeFeatures ?? '').slice(0, 64)) add(letter);
  return { caller, callee };
}
