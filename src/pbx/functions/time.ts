// STRFTIME and STRPTIME (func_strings): epoch ↔ text in a timezone (an IANA name, or the server's
// local time), with the C library's conversions and Asterisk's %1q..%6q fractions of a second.
import { isTimezone, localFields, type LocalFields } from '../../dialplan/local-time.ts';
import type { DialplanFunction } from '../function-services.ts';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** Longest format accepted: each conversion yields a few characters at most. */
const MAX_FORMAT_LENGTH = 1024;

const two = (n: number): string => String(n).padStart(2, '0');

/** Minutes east of UTC that `timezone` is at `at`. */
function offsetMinutes(at: Date, timezone: string | undefined): number {
  if (!timezone) return -at.getTimezoneOffset();
  const f = localFields(at, timezone);
  const asUtc = Date.UTC(f.year, f.month, f.day, f.hour, f.minute, f.second);
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60000);
}

function zoneAbbreviation(at: Date, timezone: string | undefined): string {
  try {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'short' }).formatToParts(at);
    return parts.find((part) => part.type === 'timeZoneName')?.value ?? '';
  } catch {
    return '';
  }
}

function dayOfYear(f: LocalFields): number {
  return Math.round((Date.UTC(f.year, f.month, f.day) - Date.UTC(f.year, 0, 1)) / 86_400_000) + 1;
}

export function strftime(format: string, epochMs: number, timezone?: string): string {
  const at = new Date(epochMs);
  const f = localFields(at, timezone);
  const hour12 = f.hour % 12 === 0 ? 12 : f.hour % 12;
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c !== '%' || i === format.length - 1) {
      out += c;
      continue;
    }
    let conversion = format[++i];
    // Asterisk's %<n>q: n digits of the fraction of a second.
    if (conversion >= '1' && conversion <= '6' && format[i + 1] === 'q') {
      const digits = Number(conversion);
      i++;
      const micro = Math.floor((((epochMs % 1000) + 1000) % 1000) * 1000);
      out += String(micro).padStart(6, '0').slice(0, digits);
      continue;
    }
    if (conversion === 'q') {
      out += String((((epochMs % 1000) + 1000) % 1000) | 0).padStart(3, '0');
      continue;
    }
    if (conversion === 'E' || conversion === 'O') conversion = format[++i] ?? '';
    out += convert(conversion, f, hour12, at, timezone);
  }
  return out;
}

function convert(conversion: string, f: LocalFields, hour12: number, at: Date, timezone: string | undefined): string {
  switch (conversion) {
    case 'a':
      return DAY_NAMES[f.weekday].slice(0, 3);
    case 'A':
      return DAY_NAMES[f.weekday];
    case 'b':
    case 'h':
      return MONTH_NAMES[f.month].slice(0, 3);
    case 'B':
      return MONTH_NAMES[f.month];
    case 'c':
      return `${DAY_NAMES[f.weekday].slice(0, 3)} ${MONTH_NAMES[f.month].slice(0, 3)} ${String(f.day).padStart(2, ' ')} ${two(f.hour)}:${two(f.minute)}:${two(f.second)} ${f.year}`;
    case 'C':
      return two(Math.floor(f.year / 100));
    case 'd':
      return two(f.day);
    case 'D':
      return `${two(f.month + 1)}/${two(f.day)}/${two(f.year % 100)}`;
    case 'e':
      return String(f.day).padStart(2, ' ');
    case 'F':
      return `${f.year}-${two(f.month + 1)}-${two(f.day)}`;
    case 'H':
      return two(f.hour);
    case 'I':
      return two(hour12);
    case 'j':
      return String(dayOfYear(f)).padStart(3, '0');
    case 'k':
      return String(f.hour).padStart(2, ' ');
    case 'l':
      return String(hour12).padStart(2, ' ');
    case 'm':
      return two(f.month + 1);
    case 'M':
      return two(f.minute);
    case 'n':
      return '\n';
    case 'p':
      return f.hour < 12 ? 'AM' : 'PM';
    case 'P':
      return f.hour < 12 ? 'am' : 'pm';
    case 'r':
      return `${two(hour12)}:${two(f.minute)}:${two(f.second)} ${f.hour < 12 ? 'AM' : 'PM'}`;
    case 'R':
      return `${two(f.hour)}:${two(f.minute)}`;
    case 's':
      return String(Math.floor(at.getTime() / 1000));
    case 'S':
      return two(f.second);
    case 't':
      return '\t';
    case 'T':
      return `${two(f.hour)}:${two(f.minute)}:${two(f.second)}`;
    case 'u':
      return String(f.weekday === 0 ? 7 : f.weekday);
    case 'w':
      return String(f.weekday);
    case 'y':
      return two(f.year % 100);
    case 'Y':
      return String(f.year);
    case 'z': {
      const offset = offsetMinutes(at, timezone);
      const magnitude = Math.abs(offset);
      return `${offset < 0 ? '-' : '+'}${two(Math.floor(magnitude / 60))}${two(magnitude % 60)}`;
    }
    case 'Z':
      return zoneAbbreviation(at, timezone);
    case '%':
      return '%';
    default:
      return `%${conversion}`;
  }
}

interface ParsedTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  pm?: boolean;
  epoch?: number;
}

/** strptime: undefined when the text does not follow the format. */
export function strptime(text: string, format: string): ParsedTime | undefined {
  const parsed: ParsedTime = { year: 1900, month: 0, day: 1, hour: 0, minute: 0, second: 0 };
  let position = 0;
  const number = (maxDigits: number, min: number, max: number): number | undefined => {
    while (text[position] === ' ') position++;
    const match = new RegExp(`^[+-]?\\d{1,${maxDigits}}`).exec(text.slice(position));
    if (!match) return undefined;
    const value = Number(match[0]);
    if (value < min || value > max) return undefined;
    position += match[0].length;
    return value;
  };
  const name = (names: readonly string[]): number | undefined => {
    const rest = text.slice(position).toLowerCase();
    for (let i = 0; i < names.length; i++) {
      for (const candidate of [names[i].toLowerCase(), names[i].slice(0, 3).toLowerCase()]) {
        if (rest.startsWith(candidate)) {
          position += candidate.length;
          return i;
        }
      }
    }
    return undefined;
  };
  const expand: Record<string, string> = { D: '%m/%d/%y', F: '%Y-%m-%d', R: '%H:%M', T: '%H:%M:%S', r: '%I:%M:%S %p' };
  const spec = format.replace(/%([DFRTr])/g, (_whole, key: string) => expand[key]);
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      while (/\s/.test(text[position] ?? '')) position++;
      continue;
    }
    if (c !== '%') {
      if (text[position] !== c) return undefined;
      position++;
      continue;
    }
    const conversion = spec[++i];
    let value: number | undefined;
    switch (conversion) {
      case 'Y':
        value = number(4, 0, 9999);
        if (value !== undefined) parsed.year = value;
        break;
      case 'y':
        value = number(2, 0, 99);
        if (value !== undefined) parsed.year = value < 69 ? 2000 + value : 1900 + value;
        break;
      case 'm':
        value = number(2, 1, 12);
        if (value !== undefined) parsed.month = value - 1;
        break;
      case 'd':
      case 'e':
        value = number(2, 1, 31);
        if (value !== undefined) parsed.day = value;
        break;
      case 'H':
      case 'k':
        value = number(2, 0, 23);
        if (value !== undefined) parsed.hour = value;
        break;
      case 'I':
      case 'l':
        value = number(2, 1, 12);
        if (value !== undefined) parsed.hour = value % 12;
        break;
      case 'M':
        value = number(2, 0, 59);
        if (value !== undefined) parsed.minute = value;
        break;
      case 'S':
        value = number(2, 0, 60);
        if (value !== undefined) parsed.second = value;
        break;
      case 'j':
        value = number(3, 1, 366);
        if (value !== undefined) {
          parsed.month = 0;
          parsed.day = value;
        }
        break;
      case 'b':
      case 'B':
      case 'h':
        value = name(MONTH_NAMES);
        if (value !== undefined) parsed.month = value;
        break;
      case 'a':
      case 'A':
        value = name(DAY_NAMES);
        break;
      case 'p': {
        const rest = text.slice(position, position + 2).toUpperCase();
        if (rest !== 'AM' && rest !== 'PM') return undefined;
        parsed.pm = rest === 'PM';
        position += 2;
        value = 0;
        break;
      }
      case 's':
        value = number(12, -1e12, 1e12);
        if (value !== undefined) parsed.epoch = value;
        break;
      case '%':
        value = text[position] === '%' ? 0 : undefined;
        position++;
        break;
      default:
        return undefined;
    }
    if (value === undefined) return undefined;
  }
  if (parsed.pm) parsed.hour += 12;
  return parsed;
}

/** The epoch of wall-clock fields in `timezone` (two passes settle the offset around DST changes). */
function epochOf(parsed: ParsedTime, timezone: string | undefined): number {
  if (parsed.epoch !== undefined) return parsed.epoch;
  const wall = Date.UTC(parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second);
  if (!timezone) {
    return Math.floor(new Date(parsed.year, parsed.month, parsed.day, parsed.hour, parsed.minute, parsed.second).getTime() / 1000);
  }
  let guess = wall;
  for (let pass = 0; pass < 2; pass++) guess = wall - offsetMinutes(new Date(guess), timezone) * 60_000;
  return Math.floor(guess / 1000);
}

export const timeFunctions: readonly DialplanFunction[] = [
  {
    name: 'STRFTIME',
    syntax: 'STRFTIME([epoch][,timezone][,format])',
    summary: 'epoch (default now) formatted with strftime conversions (default %c) in timezone (default the server\'s); %1q..%6q give fractions of a second.',
    category: 'time',
    read({ args }) {
      const [epochText = '', timezoneText = '', ...rest] = args.split(',');
      const format = rest.length === 0 ? '%c' : rest.join(',');
      if (format.length > MAX_FORMAT_LENGTH) return undefined;
      const timezone = timezoneText.trim();
      if (timezone !== '' && !isTimezone(timezone)) return undefined;
      const epoch = epochText.trim() === '' ? Date.now() : Number.parseFloat(epochText) * 1000;
      if (!Number.isFinite(epoch) || Math.abs(epoch) > 8.64e15) return undefined;
      return strftime(format, epoch, timezone || undefined);
    },
  },
  {
    name: 'STRPTIME',
    syntax: 'STRPTIME(datetime,timezone,format)',
    summary: 'The epoch of datetime read with strptime conversions, in timezone (empty for the server\'s); empty when it does not parse.',
    category: 'time',
    read({ args }) {
      const parts = args.split(',');
      if (parts.length < 3) return undefined;
      const [text, timezoneText] = parts;
      const format = parts.slice(2).join(',');
      if (format.length > MAX_FORMAT_LENGTH) return undefined;
      const timezone = timezoneText.trim();
      if (timezone !== '' && !isTimezone(timezone)) return undefined;
      const parsed = strptime(text, format);
      return parsed === undefined ? undefined : String(epochOf(parsed, timezone || undefined));
    },
  },
];
