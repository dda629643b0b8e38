// res_parking.conf from the Asterisk configuration directory, as far as Patchbay acts on it
// (res/res_parking.c's options and defaults): `[general]` and one section per parking lot; the lot
// `default` exists even when the file does not name it (Asterisk adds it). A lot's options:
// `parkext` (no extension by default), `parkpos` (701-750), `context` (parkedcalls), `parkingtime`
// (45 s, 0: no limit), `comebacktoorigin` (yes), `comebackcontext` (parkedcallstimeout),
// `comebackdialtime` (30 s), `parkedmusicclass`, `findslot` (first|next), `parkext_exclusive`,
// `parkinghints`. The DTMF-feature options (`parkedplay`, `parkedcalltransfers`, …) and
// `parkeddynamic` are read and named once as not implemented. Never throws on the file.
import { boundedWarnings, readOptionalConfFile } from '../../config/conf/optional-file.ts';
import type { ConfigSection } from '../../config/conf/reader.ts';

const FILE = 'res_parking.conf';
/** Largest res_parking.conf read (Asterisk's sample is about 5 kB). */
const MAX_FILE_BYTES = 256 * 1024;
const MAX_ENTRIES = 5_000;
/** Most parking lots: each registers extensions and holds a bridge. */
const MAX_LOTS = 100;
/** Most spaces in one lot: each space is an extension (and a hint) in the lot's context. */
const MAX_SPACES = 1_000;
/** Most warning lines (a hostile file must not flood the log). */
const MAX_WARNINGS = 100;
/** An extension: dial digits and the characters a dialplan extension may hold, bounded. */
const EXTENSION = /^[0-9A-Za-z*#+_.-]{1,40}$/;
/** A lot's name, a context or a music class: printable, no separators the dialplan would split on. */
const NAME = /^[^\s,;|@()[\]"'\\]{1,80}$/;
/** Longest parkingtime / comebackdialtime taken (a day): a timer is armed with it. */
const MAX_SECONDS = 86_400;

export const DEFAULT_LOT = 'default';

export interface ParkingLotConfig {
  readonly name: string;
  /** The extension that parks (Park()); empty: the lot registers no extensions. */
  readonly parkext: string;
  readonly parkextExclusive: boolean;
  /** The spaces, inclusive. */
  readonly parkposStart: number;
  readonly parkposStop: number;
  readonly context: string;
  /** Seconds a call stays parked before it comes back; 0: no limit. */
  readonly parkingtime: number;
  readonly comebackToOrigin: boolean;
  readonly comebackContext: string;
  /** Seconds the parker is rung when its call comes back (the park-dial extension's Dial()). */
  readonly comebackDialTime: number;
  /** Music on hold class of the parked calls; empty: the default class. */
  readonly mohClass: string;
  /** `next`: the space after the last one taken; `first`: the lowest free space. */
  readonly findNext: boolean;
  /** Hints `park:<space>@<context>` on each space's extension. */
  readonly parkingHints: boolean;
}

export const DEFAULT_LOT_CONFIG: ParkingLotConfig = {
  name: DEFAULT_LOT,
  parkext: '',
  parkextExclusive: false,
  parkposStart: 701,
  parkposStop: 750,
  context: 'parkedcalls',
  parkingtime: 45,
  comebackToOrigin: true,
  comebackContext: 'parkedcallstimeout',
  comebackDialTime: 30,
  mohClass: '',
  findNext: false,
  parkingHints: false,
};

export interface ParkingConfig {
  /** By name, `default` always among them. */
  readonly lots: ReadonlyMap<string, ParkingLotConfig>;
}

/** Options read and accepted but not acted on (Asterisk's DTMF features of a parked call, its courtesy tone). */
const NOT_IMPLEMENTED = new Set(['parkedplay', 'parkedcalltransfers', 'parkedcallreparking', 'parkedcallhangup', 'parkedcallrecording', 'courtesytone']);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const yes = (value: string): boolean | undefined => {
  const word = value.toLowerCase();
  if (['yes', 'true', 'y', 't', '1', 'on'].includes(word)) return true;
  if (['no', 'false', 'n', 'f', '0', 'off'].includes(word)) return false;
  return undefined;
};

/** Reads `dir`/res_parking.conf (missing or no directory: the default lot only); returns the lots and the warnings. */
export function loadParkingConf(dir: string | null): { config: ParkingConfig; warnings: string[] } {
  const { warnings, warn } = boundedWarnings(FILE, MAX_WARNINGS);
  const sections = dir === null
    ? undefined
    : readOptionalConfFile(dir, { name: FILE, maxBytes: MAX_FILE_BYTES, maxEntries: MAX_ENTRIES, keeping: 'only the default parking lot, without extensions', warn });
  return { config: parkingConfigOf(sections ?? [], warn), warnings };
}

/** The lots of res_parking.conf's sections; what cannot be used is warned about and left at its default. */
function parkingConfigOf(sections: readonly ConfigSection[], warn: (line: string) => void): ParkingConfig {
  const lots = new Map<string, ParkingLotConfig>();
  for (const section of sections) {
    if (section.template) continue;
    const name = section.name.trim();
    if (name.toLowerCase() === 'general') {
      for (const entry of section.entries) {
        const option = entry.name.trim().toLowerCase();
        const at = `${FILE}:${entry.line}`;
        if (option === 'parkeddynamic') {
          if (yes(entry.value.trim()) === true) warn(`${at}: parkeddynamic is not implemented by Patchbay (no dynamic parking lots); ignored`);
        } else warn(`${at}: [general] option ${option.slice(0, 40)} is not known; ignored`);
      }
      continue;
    }
    if (!NAME.test(name)) {
      warn(`${FILE}:${section.line}: parking lot name ${JSON.stringify(name.slice(0, 40))} is not usable; section ignored`);
      continue;
    }
    if (!lots.has(name) && lots.size >= MAX_LOTS) {
      warn(`${FILE}:${section.line}: more than ${MAX_LOTS} parking lots; [${name}] ignored`);
      continue;
    }
    // A section named again adds to the lot read before (Asterisk merges same-named categories).
    lots.set(name, readLot({ ...(lots.get(name) ?? DEFAULT_LOT_CONFIG), name }, section, warn));
  }
  if (!lots.has(DEFAULT_LOT)) lots.set(DEFAULT_LOT, DEFAULT_LOT_CONFIG);
  refuseOverlaps(lots, warn);
  return { lots };
}

function readLot(lot: Mutable<ParkingLotConfig>, section: ConfigSection, warn: (line: string) => void): ParkingLotConfig {
  for (const entry of section.entries) {
    const option = entry.name.trim().toLowerCase();
    const value = entry.value.trim();
    const at = `${FILE}:${entry.line}: [${lot.name}] ${option.slice(0, 40)}`;
    const flag = (set: (on: boolean) => void): void => {
      const on = yes(value);
      if (on === undefined) warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not yes or no; ignored`);
      else set(on);
    };
    const seconds = (set: (n: number) => void): void => {
      if (/^\d{1,6}$/.test(value) && Number(value) <= MAX_SECONDS) set(Number(value));
      else warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not a number of seconds (0-${MAX_SECONDS}); ignored`);
    };
    const name = (set: (text: string) => void, emptyOk: boolean): void => {
      if ((emptyOk && value === '') || NAME.test(value)) set(value);
      else warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not usable; ignored`);
    };
    switch (option) {
      case 'parkext':
        if (value === '' || EXTENSION.test(value)) lot.parkext = value;
        else warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not an extension; ignored`);
        break;
      case 'parkpos': {
        const range = /^(\d{1,9})\s*-\s*(\d{1,9})$/.exec(value);
        const start = range ? Number(range[1]) : NaN;
        const stop = range ? Number(range[2]) : NaN;
        if (!range || start < 1 || stop < start) warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not a range low-high; ignored`);
        else if (stop - start + 1 > MAX_SPACES) warn(`${at} ${value} has more than ${MAX_SPACES} spaces; ignored`);
        else {
          lot.parkposStart = start;
          lot.parkposStop = stop;
        }
        break;
      }
      case 'context':
        name((text) => (lot.context = text), false);
        break;
      case 'comebackcontext':
        name((text) => (lot.comebackContext = text), false);
        break;
      case 'parkedmusicclass':
        name((text) => (lot.mohClass = text), true);
        break;
      case 'parkingtime':
        seconds((n) => (lot.parkingtime = n));
        break;
      case 'comebackdialtime':
        seconds((n) => (lot.comebackDialTime = n));
        break;
      case 'comebacktoorigin':
        flag((on) => (lot.comebackToOrigin = on));
        break;
      case 'parkext_exclusive':
        flag((on) => (lot.parkextExclusive = on));
        break;
      case 'parkinghints':
        flag((on) => (lot.parkingHints = on));
        break;
      case 'findslot':
        if (value.toLowerCase() === 'next' || value.toLowerCase() === 'first') lot.findNext = value.toLowerCase() === 'next';
        else warn(`${at} ${JSON.stringify(value.slice(0, 40))} is not first or next; ignored`);
        break;
      default:
        if (NOT_IMPLEMENTED.has(option)) warn(`${at} is not implemented by Patchbay (no DTMF features or courtesy tone in parked calls); ignored`);
        else warn(`${at} is not a parking lot option; ignored`);
    }
  }
  return lot;
}

/**
 * Asterisk refuses a lot whose extensions collide with another's (a space twice in a context; a
 * shared parkext unless neither is exclusive): the later lot keeps its spaces out of the dialplan.
 */
function refuseOverlaps(lots: Map<string, ParkingLotConfig>, warn: (line: string) => void): void {
  const seen: ParkingLotConfig[] = [];
  for (const lot of lots.values()) {
    if (lot.parkext === '') continue;
    const clash = seen.find(
      (other) =>
        other.context === lot.context &&
        ((other.parkext === lot.parkext && (other.parkextExclusive || lot.parkextExclusive)) ||
          (other.parkposStart <= lot.parkposStop && lot.parkposStart <= other.parkposStop) ||
          (lot.parkposStart <= Number(other.parkext) && Number(other.parkext) <= lot.parkposStop) ||
          (other.parkposStart <= Number(lot.parkext) && Number(lot.parkext) <= other.parkposStop)),
    );
    if (clash) {
      warn(`${FILE}: parking lot ${lot.name}'s extensions in ${lot.context} overlap lot ${clash.name}'s; ${lot.name} registers none`);
      lots.set(lot.name, { ...lot, parkext: '' });
      continue;
    }
    seen.push(lot);
  }
}
