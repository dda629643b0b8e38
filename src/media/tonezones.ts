// Call-progress tones per country. Values are rounded from the published
// national tone plans (as collected in ITU-T E.180 Supplement 2); they are
// what a caller expects to hear, not a conformance reference.
import { parseToneList, type ToneList } from './tones.ts';

export type ToneName = 'dial' | 'ring' | 'busy' | 'congestion' | 'callwaiting' | 'dialrecall' | 'record' | 'info';

export const TONE_NAMES: readonly ToneName[] = [
  'dial',
  'ring',
  'busy',
  'congestion',
  'callwaiting',
  'dialrecall',
  'record',
  'info',
];

export interface ToneZone {
  readonly country: string;
  readonly description: string;
  /** Ring on/off pattern in ms, for phones that ring locally. */
  readonly ringCadence: readonly number[];
  /** Tone lists by name: the indications' (ToneName) and any other an indications.conf names. */
  readonly tones: Readonly<Record<string, string>>;
}

// Three short beeps, then the steady tone: the common "stutter" recall tone.
function stutter(frequencies: string): string {
  const beep = `!${frequencies}/100,!0/100`;
  return `${beep},${beep},${beep},${frequencies}`;
}

const SPECIAL_INFORMATION_TONE = '!950/330,!1400/330,!1800/330,0';

/** The zones built in, in force when no indications.conf is read. */
const BUILT_IN_ZONES: readonly ToneZone[] = [
  {
    country: 'us',
    description: 'United States / North America',
    ringCadence: [2000, 4000],
    tones: {
      dial: '350+440',
      ring: '440+480/2000,0/4000',
      busy: '480+620/500,0/500',
      congestion: '480+620/250,0/250',
      callwaiting: '440/300,0/9700',
      dialrecall: stutter('350+440'),
      record: '1400/500,0/14500',
      info: SPECIAL_INFORMATION_TONE,
    },
  },
  {
    country: 'uk',
    description: 'United Kingdom',
    ringCadence: [400, 200, 400, 2000],
    tones: {
      dial: '350+450',
      ring: '400+450/400,0/200,400+450/400,0/2000',
      busy: '400/375,0/375',
      congestion: '400/400,0/350,400/225,0/525',
      callwaiting: '400/100,0/4000',
      dialrecall: '350+450/750,0/750',
      record: '1400/500,0/60000',
      info: '!950/330,!0/15,!1400/330,!0/15,!1800/330,0',
    },
  },
  {
    country: 'de',
    description: 'Germany',
    ringCadence: [1000, 4000],
    tones: {
      dial: '425',
      ring: '425/1000,0/4000',
      busy: '425/480,0/480',
      congestion: '425/240,0/240',
      callwaiting: '425/200,0/200,425/200,0/5000',
      dialrecall: stutter('425'),
      record: '1400/80,0/15000',
      info: '950/330,1400/330,1800/330,0/1000',
    },
  },
  {
    country: 'fr',
    description: 'France',
    ringCadence: [1500, 3500],
    tones: {
      dial: '440',
      ring: '440/1500,0/3500',
      busy: '440/500,0/500',
      congestion: '440/250,0/250',
      callwaiting: '440/300,0/10000',
      dialrecall: stutter('440'),
      record: '1400/500,0/15000',
      info: SPECIAL_INFORMATION_TONE,
    },
  },
  {
    country: 'it',
    description: 'Italy',
    ringCadence: [1000, 4000],
    tones: {
      dial: '425/200,0/200,425/600,0/1000',
      ring: '425/1000,0/4000',
      busy: '425/500,0/500',
      congestion: '425/200,0/200',
      callwaiting: '425/400,0/100,425/250,0/100,425/150,0/14000',
      dialrecall: '470/400,425/400',
      record: '1400/400,0/15000',
      info: '950/330,1400/330,1800/330,0/1000',
    },
  },
  {
    country: 'jp',
    description: 'Japan',
    ringCadence: [1000, 2000],
    tones: {
      dial: '400',
      // Japanese ringback is 400 Hz modulated at 16 Hz.
      ring: '400*16/1000,0/2000',
      busy: '400/500,0/500',
      congestion: '400/500,0/500',
      callwaiting: '400*16/500,0/8000',
      dialrecall: stutter('400'),
      record: '1400/500,0/15000',
      info: SPECIAL_INFORMATION_TONE,
    },
  },
];

function byCountry(zones: readonly ToneZone[]): ReadonlyMap<string, ToneZone> {
  return new Map(zones.map((zone) => [zone.country.toLowerCase(), zone]));
}

/** The built-in default country; an indications.conf's `[general] country=` replaces it. */
const DEFAULT_TONE_ZONE = 'us';

// The zones in force, for the whole process: the built-in ones, or those an indications.conf
// defined (installToneZones, at start-up), as Asterisk's ast_tone_zones container.
let zonesByCountry = byCountry(BUILT_IN_ZONES);
let defaultCountry = DEFAULT_TONE_ZONE;

/**
 * Puts `zones` in force with `country` as the default (Asterisk's indications.conf): undefined puts
 * the built-in zones back. A default that is no zone's is the first zone's country, as Asterisk's.
 */
export function installToneZones(zones: readonly ToneZone[] | undefined, country?: string): void {
  const chosen = zones === undefined || zones.length === 0 ? BUILT_IN_ZONES : zones;
  zonesByCountry = byCountry(chosen);
  const wanted = (zones === undefined ? DEFAULT_TONE_ZONE : country)?.toLowerCase();
  defaultCountry = wanted !== undefined && zonesByCountry.has(wanted) ? wanted : chosen[0]!.country.toLowerCase();
}

/** The country whose tones a channel without a zone of its own hears. */
export function defaultToneZone(): string {
  return defaultCountry;
}

/** The countries of the zones in force. */
export function toneZoneCountries(): string[] {
  return [...zonesByCountry.keys()];
}

export function getToneZone(country: string): ToneZone | undefined {
  return zonesByCountry.get(country.trim().toLowerCase());
}

/**
 * Resolves a tone by name in a zone (an indication's, or any other the zone names, as Asterisk's
 * ast_get_indication_tone), or else as a literal tone list. Undefined for an unknown zone's
 * indication or an unparsable list.
 */
export function resolveTone(nameOrList: string, country: string = defaultCountry): ToneList | undefined {
  const name = nameOrList.trim().toLowerCase();
  const zone = getToneZone(country);
  if (zone !== undefined && Object.hasOwn(zone.tones, name)) return parseToneList(zone.tones[name]!);
  if ((TONE_NAMES as readonly string[]).includes(name)) return undefined;
  return parseToneList(nameOrList);
}

/**
 * Resolves the part of a `tone:` media URI after the scheme, e.g.
 * `ring;tonezone=fr` or `440+480/2000,0/4000`.
 */
export function resolveToneMedia(resource: string, zone: string = defaultCountry): ToneList | undefined {
  const [tone, ...options] = resource.split(';');
  let country = zone;
  for (const option of options) {
    const [key, value] = option.split('=');
    if (key?.trim().toLowerCase() === 'tonezone' && value !== undefined) country = value.trim();
  }
  return resolveTone(tone ?? '', country);
}
