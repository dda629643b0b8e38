// SayDigits, SayNumber, SayAlpha and SayUnixTime: spoken values from the language's prompts
// (Asterisk's digits/ and letters/ sound sets), through the playback engine's `digits:`,
// `number:` and `characters:` media and, for dates, prompts chosen as say.c does for English.
import { sayNumber } from '../../core/playback/say.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';
import type { Channel } from '../../core/channels/channel.ts';
import { localFields, type LocalFields } from '../../dialplan/local-time.ts';

/** Plays media URIs one after the other; false when the channel hung up. */
async function playAll(channel: Channel, services: PbxServices, uris: readonly string[]): Promise<boolean> {
  const engine = services.playbacks;
  if (!engine) return !channel.hangingUp;
  for (const uri of uris) {
    if (channel.hangingUp) return false;
    const playback = engine.playOnChannel(channel, { media: [uri], language: channel.language, internal: true });
    const state = await engine.finished(playback);
    if (state === 'failed') services.log.warn({ channel: channel.name, media: uri }, `Say: ${uri} could not be played`);
  }
  return !channel.hangingUp;
}

function sayApplication(name: string, synopsis: string, scheme: string): DialplanApplication {
  return {
    name,
    synopsis,
    async execute(channel, [value], services): Promise<AppOutcome> {
      const text = (value ?? '').trim();
      if (text === '') {
        services.log.warn({ channel: channel.name }, `${name} requires an argument`);
        return 'next';
      }
      if (scheme === 'number' && !/^[+-]?\d+$/.test(text)) {
        services.log.warn({ channel: channel.name }, `${name}: '${text}' is not a number`);
        return 'next';
      }
      return (await playAll(channel, services, [`${scheme}:${text}`])) ? 'next' : 'stop';
    },
  };
}

export const sayDigitsApp = sayApplication('SayDigits', 'Says a string of digits one by one', 'digits');
export const sayNumberApp = sayApplication('SayNumber', 'Says a whole number ("one hundred twenty three")', 'number');
export const sayAlphaApp = sayApplication('SayAlpha', 'Spells a string letter by letter', 'characters');

const DEFAULT_DATE_FORMAT = "ABdY 'digits/at' IMp";

/** The calendar fields SayUnixTime speaks (month 0–11, weekday 0 = Sunday). */
type TimeParts = LocalFields;

function timeParts(epochSeconds: number, timezone: string | undefined): TimeParts {
  return localFields(new Date(epochSeconds * 1000), timezone);
}

/** `digits/h-N` ordinals: below 20 one prompt, else the tens and the unit's ordinal. */
function ordinal(value: number): string[] {
  if (value < 20 || value % 10 === 0) return [`digits/h-${value}`];
  return [`digits/${Math.floor(value / 10) * 10}`, `digits/h-${value % 10}`];
}

/** The prompts of `format` (say.c's English letters; a quoted text is a sound file). */
export function dateFormatPrompts(parts: TimeParts, format: string): string[] {
  const prompts: string[] = [];
  for (let i = 0; i < format.length; i++) {
    const letter = format[i];
    switch (letter) {
      case "'": {
        const close = format.indexOf("'", i + 1);
        const end = close < 0 ? format.length : close;
        const file = format.slice(i + 1, end).trim();
        if (file !== '') prompts.push(file);
        i = end;
        break;
      }
      case 'A':
      case 'a':
        prompts.push(`digits/day-${parts.weekday}`);
        break;
      case 'B':
      case 'b':
      case 'h':
        prompts.push(`digits/mon-${parts.month}`);
        break;
      case 'd':
      case 'e':
        prompts.push(...ordinal(parts.day));
        break;
      case 'm':
        prompts.push(...ordinal(parts.month + 1));
        break;
      case 'Y':
        if (parts.year >= 2000 && parts.year < 2100) {
          prompts.push('digits/2', 'digits/thousand');
          if (parts.year > 2000) prompts.push(...sayNumber(parts.year - 2000));
        } else {
          prompts.push(...sayNumber(Math.floor(parts.year / 100)));
          if (parts.year % 100 !== 0) prompts.push(...(parts.year % 100 < 10 ? ['digits/oh'] : []), ...sayNumber(parts.year % 100));
          else prompts.push('digits/hundred');
        }
        break;
      case 'I':
      case 'l':
        prompts.push(`digits/${parts.hour % 12 === 0 ? 12 : parts.hour % 12}`);
        break;
      case 'H':
      case 'k':
        if (parts.hour < 10 && letter === 'H') prompts.push('digits/oh');
        prompts.push(...sayNumber(parts.hour));
        break;
      case 'M':
        if (parts.minute === 0) prompts.push('digits/oclock');
        else if (parts.minute < 10) prompts.push('digits/oh', `digits/${parts.minute}`);
        else prompts.push(...sayNumber(parts.minute));
        break;
      case 'S':
        prompts.push(...sayNumber(parts.second));
        break;
      case 'P':
      case 'p':
        prompts.push(parts.hour < 12 ? 'digits/a-m' : 'digits/p-m');
        break;
      default:
        // Spaces and letters without an English rendering say nothing.
        break;
    }
  }
  return prompts;
}

/**
 * SayUnixTime([unixtime][,timezone][,format]): says a time (default now) in the timezone (an IANA
 * name; default the server's) as the format says, by default "ABdY 'digits/at' IMp".
 */
export const sayUnixTime: DialplanApplication = {
  name: 'SayUnixTime',
  synopsis: "Says a date and time (unixtime, timezone, format as say.c's letters)",
  async execute(channel, [timeArg, zoneArg, formatArg], services): Promise<AppOutcome> {
    const parsed = Number.parseInt(timeArg ?? '', 10);
    const epoch = Number.isSafeInteger(parsed) && Math.abs(parsed) < 8.64e12 ? parsed : Math.floor(Date.now() / 1000);
    let timezone = zoneArg?.trim() || undefined;
    if (timezone) {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: timezone });
      } catch {
        services.log.warn({ channel: channel.name }, `SayUnixTime: unknown timezone '${timezone}'; using the server's`);
        timezone = undefined;
      }
    }
    const prompts = dateFormatPrompts(timeParts(epoch, timezone), formatArg?.trim() || DEFAULT_DATE_FORMAT);
    return (await playAll(channel, services, prompts.map((prompt) => `sound:${prompt}`))) ? 'next' : 'stop';
  },
};
