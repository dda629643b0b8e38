// Asterisk's time specification, `times,weekdays,mdays,months[,timezone]` (GotoIfTime, IFTIME,
// time-restricted includes): each field `*` or ranges joined by `&` (`mon-fri&sun`), ranges
// wrapping round (`fri-mon`, `22:00-06:00`). Times are minutes, both ends included, as Asterisk's
// per-minute mask. The timezone is an IANA name; without one the server's local time is used.
import { localFields, WEEKDAYS } from './local-time.ts';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export class TimeSpecError extends Error {}

export interface TimeSpec {
  /** Per minute of the day (1440). */
  readonly minutes: Uint8Array;
  /** 0 = Sunday. */
  readonly weekdays: readonly boolean[];
  /** Index 1..31. */
  readonly mdays: readonly boolean[];
  /** 0 = January. */
  readonly months: readonly boolean[];
  readonly timezone: string | undefined;
}

/** Parses a time spec; throws TimeSpecError naming the field at fault. */
export function parseTimeSpec(text: string): TimeSpec {
  const fields = text.split(/[,|]/).map((field) => field.trim());
  if (fields.length < 4 || fields.length > 5) throw new TimeSpecError(`expected times,weekdays,mdays,months[,timezone], got '${text}'`);
  const [times, weekdays, mdays, months, timezone] = fields;
  if (timezone) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    } catch {
      throw new TimeSpecError(`unknown timezone '${timezone}'`);
    }
  }
  return {
    minutes: parseTimes(times),
    weekdays: parseNamedRanges(weekdays, WEEKDAYS, 'weekday'),
    mdays: parseNumberRanges(mdays, 1, 31, 'day of month'),
    months: parseNamedRanges(months, MONTHS, 'month'),
    timezone: timezone || undefined,
  };
}

/** Whether `when` falls within the spec. */
export function timeSpecMatches(spec: TimeSpec, when: Date = new Date()): boolean {
  const fields = localFields(when, spec.timezone);
  return spec.months[fields.month] && spec.mdays[fields.day] && spec.weekdays[fields.weekday] && spec.minutes[fields.hour * 60 + fields.minute] === 1;
}

function parseTimes(field: string): Uint8Array {
  const mask = new Uint8Array(1440);
  if (field === '' || field === '*') return mask.fill(1);
  for (const range of field.split('&')) {
    const [from, to = from] = range.split('-').map((part) => part.trim());
    const start = minuteOfDay(from);
    const end = minuteOfDay(to);
    for (let minute = start; ; minute = (minute + 1) % 1440) {
      mask[minute] = 1;
      if (minute === end) break;
    }
  }
  return mask;
}

function minuteOfDay(text: string): number {
  const match = /^(\d{1,2}):(\d{2})$/.exec(text);
  const hour = match ? Number(match[1]) : Number.NaN;
  const minute = match ? Number(match[2]) : Number.NaN;
  if (!(hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59)) throw new TimeSpecError(`invalid time '${text}' (expected HH:MM)`);
  return hour * 60 + minute;
}

function parseNamedRanges(field: string, names: readonly string[], what: string): boolean[] {
  const index = (text: string): number => {
    const found = names.indexOf(text.trim().toLowerCase().slice(0, 3));
    if (found < 0 || text.trim().length < 3) throw new TimeSpecError(`invalid ${what} '${text}'`);
    return found;
  };
  return ranges(field, names.length, 0, index);
}

function parseNumberRanges(field: string, low: number, high: number, what: string): boolean[] {
  const number = (text: string): number => {
    const value = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
    if (!(value >= low && value <= high)) throw new TimeSpecError(`invalid ${what} '${text}'`);
    return value;
  };
  return ranges(field, high + 1, low, number);
}

/** Marks each range of a field in an array of `size` (values `low`..size-1), wrapping round. */
function ranges(field: string, size: number, low: number, value: (text: string) => number): boolean[] {
  const marks = new Array<boolean>(size).fill(false);
  if (field === '' || field === '*') return marks.fill(true, low);
  for (const range of field.split('&')) {
    const [from, to = from] = range.split('-');
    const start = value(from);
    const end = value(to);
    for (let at = start; ; at = at + 1 >= size ? low : at + 1) {
      marks[at] = true;
      if (at === end) break;
    }
  }
  return marks;
}
