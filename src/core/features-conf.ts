// features.conf from the Asterisk configuration directory, as far as Patchbay acts on it: the call
// pickup options of [general] (main/features_config.c): `pickupexten` (default *8), the extension a
// phone dials to pick up a ringing call of its pickup group; `pickupsound`, played to the picker
// once it is connected; `pickupfailsound`, played to a picker that found nothing. Every other
// option and section is named once at start-up as not implemented. Never throws on the file.
import { readOptionalConfFile } from '../config/conf/optional-file.ts';

const FILE = 'features.conf';
/** Largest features.conf read (Asterisk's sample is about 40 kB). */
const MAX_FILE_BYTES = 256 * 1024;
const MAX_ENTRIES = 5_000;
/** Most warning lines (a hostile file must not flood the log). */
const MAX_WARNINGS = 100;
/** An extension: dial digits and the characters a dialplan extension may hold, bounded. */
const EXTENSION = /^[0-9A-Za-z*#+_.-]{1,40}$/;
/** A sound name, bounded like any file name a channel plays. */
const MAX_SOUND = 256;

export interface PickupFeatures {
  /** The pickup extension; empty: none. */
  readonly pickupExten: string;
  readonly pickupSound: string;
  readonly pickupFailSound: string;
}

export const DEFAULT_PICKUP_FEATURES: PickupFeatures = { pickupExten: '*8', pickupSound: '', pickupFailSound: '' };

/** Reads `dir`/features.conf (missing or no directory: Asterisk's defaults); returns the pickup options and the warnings. */
export function loadFeaturesConf(dir: string | null): { features: PickupFeatures; warnings: string[] } {
  const warnings: string[] = [];
  const warn = (line: string): void => {
    if (warnings.length < MAX_WARNINGS) warnings.push(line);
    else if (warnings.length === MAX_WARNINGS) warnings.push(`${FILE}: more warnings left out`);
  };
  const sections = dir === null
    ? undefined
    : readOptionalConfFile(dir, { name: FILE, maxBytes: MAX_FILE_BYTES, maxEntries: MAX_ENTRIES, keeping: 'the defaults apply (pickupexten *8)', warn });
  if (!sections) return { features: DEFAULT_PICKUP_FEATURES, warnings };
  let { pickupExten, pickupSound, pickupFailSound } = DEFAULT_PICKUP_FEATURES;
  for (const section of sections) {
    if (section.template) continue;
    if (section.name.toLowerCase() !== 'general') {
      warn(`${FILE}:${section.line}: [${section.name.slice(0, 40)}] is not implemented by Patchbay; ignored`);
      continue;
    }
    for (const entry of section.entries) {
      const name = entry.name.trim().toLowerCase();
      const value = entry.value.trim();
      const at = `${FILE}:${entry.line}`;
      if (name === 'pickupexten') {
        if (value === '' || EXTENSION.test(value)) pickupExten = value;
        else warn(`${at}: pickupexten ${JSON.stringify(value.slice(0, 40))} is not an extension (1 to 40 of 0-9 A-Z * # + _ . -); ${pickupExten || 'none'} stays`);
      } else if (name === 'pickupsound' || name === 'pickupfailsound') {
        if (value.length > MAX_SOUND) warn(`${at}: ${name} is longer than ${MAX_SOUND} characters; ignored`);
        else if (name === 'pickupsound') pickupSound = value;
        else pickupFailSound = value;
      } else warn(`${at}: [general] option ${name.slice(0, 40)} is not implemented by Patchbay; ignored`);
    }
  }
  return { features: { pickupExten, pickupSound, pickupFailSound }, warnings };
}
