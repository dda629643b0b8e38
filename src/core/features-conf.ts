// features.conf from the Asterisk configuration directory, as far as Patchbay acts on it
// (main/features_config.c). [general]: the call pickup options — `pickupexten` (default *8), the
// extension a phone dials to pick up a ringing call of its pickup group; `pickupsound`, played to
// the picker once it is connected; `pickupfailsound`, played to a picker that found nothing — and
// the in-call DTMF feature options the two-party bridge acts on (core/bridge-features.ts):
// `featuredigittimeout`, the transfer options and their sounds. [featuremap]: the DTMF code of each
// built-in feature, with Asterisk 22's defaults (blindxfer #, disconnect *, the others none).
// Every other option and section is named once at start-up as not implemented; a feature that is
// parsed but not carried out (atxfer, parkcall, automon) is named too. Never throws on the file.
import { boundedWarnings, readOptionalConfFile } from '../config/conf/optional-file.ts';

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
/** A feature's DTMF code: DTMF digits, at most AST_FEATURE_MAX_LEN (11) of them. */
const FEATURE_CODE = /^[0-9*#A-Da-d]{1,11}$/;

export interface PickupFeatures {
  /** The pickup extension; empty: none. */
  readonly pickupExten: string;
  readonly pickupSound: string;
  readonly pickupFailSound: string;
}

export const DEFAULT_PICKUP_FEATURES: PickupFeatures = { pickupExten: '*8', pickupSound: '', pickupFailSound: '' };

/** The built-in features of [featuremap]. */
export type FeatureName = 'blindxfer' | 'disconnect' | 'automixmon' | 'atxfer' | 'parkcall' | 'automon';

/** The DTMF code of each feature; empty: the feature has no code (it cannot be pressed). */
export type FeatureMap = Readonly<Record<FeatureName, string>>;

/** What the in-call features read of [general]. */
export interface FeatureOptions {
  /** Most time between the digits of a feature code (ms). */
  readonly featureDigitTimeoutMs: number;
  /** Most time between the digits a blind transferer dials (ms). */
  readonly transferDigitTimeoutMs: number;
  /** Tries the transferer has to dial an extension that exists. */
  readonly transferDialAttempts: number;
  readonly transferAnnounceSound: string;
  readonly transferRetrySound: string;
  readonly transferInvalidSound: string;
  readonly xferSound: string;
  readonly xferFailSound: string;
  /** Played to both parties as automixmon starts or stops recording. */
  readonly courtesyTone: string;
  /** Played to the presser when automixmon cannot record. */
  readonly recordingFailSound: string;
}

export interface BridgeFeatureConfig {
  readonly featureMap: FeatureMap;
  readonly options: FeatureOptions;
}

/** Asterisk 22's defaults (features_config.c), what applies without a features.conf. */
export const DEFAULT_BRIDGE_FEATURES: BridgeFeatureConfig = {
  featureMap: { blindxfer: '#', disconnect: '*', automixmon: '', atxfer: '', parkcall: '', automon: '' },
  options: {
    featureDigitTimeoutMs: 1000,
    transferDigitTimeoutMs: 3000,
    transferDialAttempts: 3,
    transferAnnounceSound: 'pbx-transfer',
    transferRetrySound: 'pbx-invalid',
    transferInvalidSound: 'privacy-incorrect',
    xferSound: 'beep',
    xferFailSound: 'beeperr',
    courtesyTone: '',
    recordingFailSound: '',
  },
};

const FEATURE_NAMES: ReadonlySet<string> = new Set<FeatureName>(['blindxfer', 'disconnect', 'automixmon', 'atxfer', 'parkcall', 'automon']);

/** The [general] sound options and the field each sets. */
const SOUND_OPTIONS: ReadonlyMap<string, keyof FeatureOptions> = new Map<string, keyof FeatureOptions>([
  ['transferannouncesound', 'transferAnnounceSound'],
  ['transferretrysound', 'transferRetrySound'],
  ['transferinvalidsound', 'transferInvalidSound'],
  ['xfersound', 'xferSound'],
  ['xferfailsound', 'xferFailSound'],
  ['courtesytone', 'courtesyTone'],
  ['recordingfailsound', 'recordingFailSound'],
]);

/** The [general] numbers: field, unit multiplier to ms (1 for counts), Asterisk's allowed range. */
const NUMBER_OPTIONS: ReadonlyMap<string, { readonly field: keyof FeatureOptions; readonly scale: number; readonly min: number; readonly max: number }> = new Map([
  ['featuredigittimeout', { field: 'featureDigitTimeoutMs', scale: 1, min: 1, max: 60_000 }],
  ['transferdigittimeout', { field: 'transferDigitTimeoutMs', scale: 1000, min: 1, max: 600 }],
  ['transferdialattempts', { field: 'transferDialAttempts', scale: 1, min: 1, max: 10 }],
] as const);

export interface FeaturesConf {
  readonly features: PickupFeatures;
  readonly bridgeFeatures: BridgeFeatureConfig;
  readonly warnings: string[];
}

/** Reads `dir`/features.conf (missing or no directory: Asterisk's defaults); returns the options and the warnings. */
export function loadFeaturesConf(dir: string | null): FeaturesConf {
  const { warnings, warn } = boundedWarnings(FILE, MAX_WARNINGS);
  const sections = dir === null
    ? undefined
    : readOptionalConfFile(dir, { name: FILE, maxBytes: MAX_FILE_BYTES, maxEntries: MAX_ENTRIES, keeping: 'the defaults apply (pickupexten *8, blindxfer #, disconnect *)', warn });
  if (!sections) return { features: DEFAULT_PICKUP_FEATURES, bridgeFeatures: DEFAULT_BRIDGE_FEATURES, warnings };
  let { pickupExten, pickupSound, pickupFailSound } = DEFAULT_PICKUP_FEATURES;
  const featureMap: Record<FeatureName, string> = { ...DEFAULT_BRIDGE_FEATURES.featureMap };
  const options: Record<keyof FeatureOptions, number | string> = { ...DEFAULT_BRIDGE_FEATURES.options };
  for (const section of sections) {
    if (section.template) continue;
    const sectionName = section.name.toLowerCase();
    if (sectionName === 'featuremap') {
      for (const entry of section.entries) readFeatureCode(entry, featureMap, warn);
      continue;
    }
    if (sectionName !== 'general') {
      warn(`${FILE}:${section.line}: [${section.name.slice(0, 40)}] is not implemented by Patchbay (application maps and feature groups); ignored`);
      continue;
    }
    for (const entry of section.entries) {
      const name = entry.name.trim().toLowerCase();
      const value = entry.value.trim();
      const at = `${FILE}:${entry.line}`;
      const number = NUMBER_OPTIONS.get(name);
      const sound = SOUND_OPTIONS.get(name);
      if (name === 'pickupexten') {
        if (value === '' || EXTENSION.test(value)) pickupExten = value;
        else warn(`${at}: pickupexten ${JSON.stringify(value.slice(0, 40))} is not an extension (1 to 40 of 0-9 A-Z * # + _ . -); ${pickupExten || 'none'} stays`);
      } else if (name === 'pickupsound' || name === 'pickupfailsound') {
        if (value.length > MAX_SOUND) warn(`${at}: ${name} is longer than ${MAX_SOUND} characters; ignored`);
        else if (name === 'pickupsound') pickupSound = value;
        else pickupFailSound = value;
      } else if (number) {
        const parsed = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
        if (parsed >= number.min && parsed <= number.max) options[number.field] = parsed * number.scale;
        else warn(`${at}: ${name} ${JSON.stringify(value.slice(0, 20))} is not a whole number from ${number.min} to ${number.max}; ${Number(options[number.field]) / number.scale} stays`);
      } else if (sound) {
        if (value.length > MAX_SOUND) warn(`${at}: ${name} is longer than ${MAX_SOUND} characters; ignored`);
        else options[sound] = value;
      } else warn(`${at}: [general] option ${name.slice(0, 40)} is not implemented by Patchbay; ignored`);
    }
  }
  for (const name of ['atxfer', 'parkcall', 'automon'] as const) {
    if (featureMap[name] !== '') warn(`${FILE}: [featuremap] ${name} (${featureMap[name]}) is not implemented by Patchbay; its digits pass to the other party`);
  }
  return {
    features: { pickupExten, pickupSound, pickupFailSound },
    bridgeFeatures: { featureMap, options: options as unknown as FeatureOptions },
    warnings,
  };
}

function readFeatureCode(entry: { readonly name: string; readonly value: string; readonly line: number }, featureMap: Record<FeatureName, string>, warn: (line: string) => void): void {
  const name = entry.name.trim().toLowerCase();
  const value = entry.value.trim();
  const at = `${FILE}:${entry.line}`;
  if (!FEATURE_NAMES.has(name)) {
    warn(`${at}: [featuremap] ${name.slice(0, 40)} is not a built-in feature Patchbay knows; ignored`);
    return;
  }
  // Asterisk's featuremap values may carry ",caller|callee|both" etc. only in applicationmap; a code is all there is here.
  if (value !== '' && !FEATURE_CODE.test(value)) {
    warn(`${at}: [featuremap] ${name} ${JSON.stringify(value.slice(0, 20))} is not a DTMF code (1 to 11 of 0-9 * # A-D); ${featureMap[name as FeatureName] || 'none'} stays`);
    return;
  }
  featureMap[name as FeatureName] = value.toUpperCase();
}
