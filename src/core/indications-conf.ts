// indications.conf from the Asterisk configuration directory, as Asterisk's indications loader
// (main/indications.c) reads it: every section but [general] is a country with a `description`, a
// `ringcadence` and its tones by name (dial, ring, busy, congestion, callwaiting, dialrecall,
// record, info, stutter, or any other name PlayTones() may ask for); `[general] country=` is the
// default zone. The file's zones replace the built-in ones (media/tonezones.ts); without the file
// those stay. A tone list Asterisk could not parse, a country without a description or a tone, a
// ring cadence value that is no number are named in one start-up line each and left out; a file
// too big or unreadable leaves the built-in zones. Never throws on the file's contents.
import type { ConfigSection } from '../config/conf/reader.ts';
import { readOptionalConfFile } from '../config/conf/optional-file.ts';
import { asteriskToneList, parseToneList } from '../media/tones.ts';
import { installToneZones, type ToneZone } from '../media/tonezones.ts';

const FILE = 'indications.conf';
/** Largest indications.conf read (Asterisk's sample is 40 kB). */
const MAX_FILE_BYTES = 1024 * 1024;
/** Most entries in the file. */
const MAX_ENTRIES = 20_000;
/** Most countries kept (the sample has about a hundred). */
const MAX_ZONES = 500;
/** Most tones one country keeps. */
const MAX_TONES_PER_ZONE = 64;
/** Most values of a ring cadence. */
const MAX_CADENCE_VALUES = 32;
/** Longest tone list text. */
const MAX_TONE_TEXT = 2048;
/** A country code: Asterisk keeps 16 characters of it. */
const COUNTRY = /^[A-Za-z0-9_-]{1,16}$/;
/** A tone's name. */
const TONE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Most warning lines (a hostile file must not flood the log). */
const MAX_WARNINGS = 200;

/**
 * Reads `dir`/indications.conf (none: null) and puts its zones in force; returns the warnings. On a
 * `reload` (`module reload indications`), as Asterisk's load_indications: a file missing, unreadable
 * or that cannot be parsed keeps the zones in force, and so (Patchbay's choice) does one without a
 * valid country, where Asterisk would be left with none; otherwise the file's zones replace them and
 * new tones use them (tones playing go on).
 */
export function loadIndicationsConf(dir: string | null, options: { reload?: boolean } = {}): string[] {
  const warnings: string[] = [];
  const warn = (line: string): void => {
    if (warnings.length < MAX_WARNINGS) warnings.push(line);
    else if (warnings.length === MAX_WARNINGS) warnings.push(`${FILE}: more warnings left out`);
  };
  const keeping = options.reload === true ? 'the tone zones in force stay' : 'the built-in tone zones stay';
  const sections = dir === null ? undefined : readOptionalConfFile(dir, { name: FILE, maxBytes: MAX_FILE_BYTES, maxEntries: MAX_ENTRIES, keeping, warn });
  if (sections === undefined) {
    // Without a configuration directory there is nothing to reload, and nothing to say each time.
    if (options.reload === true && dir !== null) warn(`${FILE}: not reloaded; ${keeping}`);
    else installToneZones(undefined);
    return warnings;
  }
  const zones = new Map<string, ToneZone>();
  let country: string | undefined;
  for (const section of sections) {
    if (section.template) continue;
    if (section.name.toLowerCase() === 'general') {
      for (const entry of section.entries) {
        if (entry.name.trim().toLowerCase() === 'country') country = entry.value.trim();
        else warn(`${FILE}:${entry.line}: [general] option ${entry.name.trim().slice(0, 40)} is not read`);
      }
      continue;
    }
    if (!COUNTRY.test(section.name)) {
      warn(`${FILE}:${section.line}: [${section.name.slice(0, 40)}] is not a country code (1 to 16 letters, digits, - or _); left out`);
      continue;
    }
    if (zones.size >= MAX_ZONES && !zones.has(section.name.toLowerCase())) {
      warn(`${FILE}:${section.line}: [${section.name}] is beyond ${MAX_ZONES} countries; left out`);
      continue;
    }
    const zone = readZone(section, warn);
    if (zone) zones.set(zone.country, zone);
  }
  if (zones.size === 0) {
    warn(`${FILE}: no valid country; ${keeping}`);
    if (options.reload !== true) installToneZones(undefined);
    return warnings;
  }
  const list = [...zones.values()];
  if (country === undefined || country === '') warn(`${FILE}: [general] has no country=; the default tone zone is the first country, ${list[0]!.country}`);
  else if (!zones.has(country.toLowerCase())) warn(`${FILE}: [general] country=${country.slice(0, 40)} is no country of the file; the default tone zone is the first, ${list[0]!.country}`);
  installToneZones(list, country);
  return warnings;
}

/** One country's section, as parse_tone_zone reads it; undefined (named) when it has no description or no tone. */
function readZone(section: ConfigSection, warn: (line: string) => void): ToneZone | undefined {
  const where = `${FILE}:${section.line}: [${section.name}]`;
  let description = '';
  const ringCadence: number[] = [];
  const tones: Record<string, string> = Object.create(null) as Record<string, string>;
  let toneCount = 0;
  for (const entry of section.entries) {
    const name = entry.name.trim().toLowerCase();
    const value = entry.value.trim();
    const at = `${FILE}:${entry.line}`;
    if (name === 'description') description = value.slice(0, 256);
    else if (name === 'ringcadence') readCadence(value, at, ringCadence, warn);
    else if (!TONE_NAME.test(name)) warn(`${at}: ${name.slice(0, 40)} is not a tone name; left out`);
    else if (value === '') continue;
    else if (value.length > MAX_TONE_TEXT) warn(`${at}: the ${name} tone is longer than ${MAX_TONE_TEXT} characters; left out`);
    else {
      const read = asteriskToneList(value);
      if ('unparsable' in read) {
        warn(`${at}: the ${name} tone cannot be parsed at '${read.unparsable.slice(0, 40)}'; left out`);
        continue;
      }
      if (parseToneList(read.list) === undefined) {
        warn(`${at}: the ${name} tone has more parts than Patchbay plays; left out`);
        continue;
      }
      if (!(name in tones)) toneCount++;
      if (toneCount > MAX_TONES_PER_ZONE) {
        warn(`${at}: [${section.name}] has more than ${MAX_TONES_PER_ZONE} tones; ${name} left out`);
        toneCount--;
        continue;
      }
      // A name given twice: the later list replaces the earlier, as ast_register_indication.
      tones[name] = read.list;
    }
  }
  if (description === '' || toneCount === 0) {
    warn(`${where} has ${description === '' ? 'no description' : 'no tone'}: an invalid country, left out (as Asterisk)`);
    return undefined;
  }
  return { country: section.name.toLowerCase(), description, ringCadence, tones };
}

/** `ringcadence = 2000,4000`: each value a number of milliseconds; others named and skipped. */
function readCadence(value: string, at: string, into: number[], warn: (line: string) => void): void {
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (!/^\d{1,9}$/.test(item)) {
      warn(`${at}: ringcadence value '${item.slice(0, 20)}' is not a number of milliseconds; skipped`);
      continue;
    }
    if (into.length < MAX_CADENCE_VALUES) into.push(Number(item));
  }
}
