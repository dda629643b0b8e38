// Calendar fields of an instant in a timezone (an IANA name) or in the server's local time, for
// STRFTIME/STRPTIME, SayUnixTime and time specifications (GotoIfTime, IFTIME, included
// contexts). Formatters are cached per timezone name, a bounded number of them.

/** Weekday abbreviations, Sunday first (Date.getDay()'s order), as dialplans spell them. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface LocalFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly weekday: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Cached formatters are per timezone name; bounded since timezone names come from dialplans. */
const MAX_CACHED_FORMATTERS = 64;

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size >= MAX_CACHED_FORMATTERS) formatters.clear();
    formatters.set(timezone, formatter);
  }
  return formatter;
}

export function isTimezone(name: string): boolean {
  if (name.length > 64) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/** The calendar fields of `at` in `timezone` (an IANA name), or in the server's local time. */
export function localFields(at: Date, timezone?: string): LocalFields {
  if (!timezone) {
    return {
      year: at.getFullYear(),
      month: at.getMonth(),
      day: at.getDate(),
      weekday: at.getDay(),
      hour: at.getHours(),
      minute: at.getMinutes(),
      second: at.getSeconds(),
    };
  }
  let year = 1970;
  let month = 0;
  let day = 1;
  let weekday = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  for (const part of formatterFor(timezone).formatToParts(at)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value) - 1;
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'weekday':
        weekday = WEEKDAYS.indexOf(part.value.toLowerCase().slice(0, 3));
        break;
      case 'hour':
        hour = Number(part.value) % 24;
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        second = Number(part.value);
        break;
    }
  }
  return { year, month, day, weekday, hour, minute, second };
}
