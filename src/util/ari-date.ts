// ARI dates: local time with milliseconds and a colon-less UTC offset (strftime "%FT%T.%q%z").

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function format(date: Date): string {
  const offsetMinutes = -date.getTimezoneOffset();
  const sign = offsetMinutes >= 0 ? '+' : '-';
  const absolute = Math.abs(offsetMinutes);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(absolute / 60))}${pad(absolute % 60)}`
  );
}

// Every event carries a timestamp and every channel snapshot its creation time, so one call
// raises a burst of formats of the same millisecond or two. The text depends only on the
// millisecond (and the time zone, which does not change within one), so the last result of
// each kind is remembered: one entry for "now", one for explicit dates (creation times).
let nowMs = Number.NaN;
let nowText = '';
let givenMs = Number.NaN;
let givenText = '';

export function formatAriDate(date?: Date): string {
  if (date === undefined) {
    const ms = Date.now();
    if (ms !== nowMs) {
      nowText = format(new Date(ms));
      nowMs = ms;
    }
    return nowText;
  }
  const ms = date.getTime();
  if (ms !== givenMs) {
    givenText = format(date);
    givenMs = ms;
  }
  return givenText;
}

export const ARI_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{4}$/;
