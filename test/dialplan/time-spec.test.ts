// Asterisk's time specification (GotoIfTime, timed includes): fields, ranges that wrap, `&`,
// minute-inclusive ends, timezones, and refusal of malformed specs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseTimeSpec, timeSpecMatches, TimeSpecError } from '../../src/dialplan/time-spec.ts';

// Wednesday 2026-03-18 09:30 UTC.
const WEDNESDAY_0930_UTC = new Date(Date.UTC(2026, 2, 18, 9, 30));
const at = (spec: string, when = WEDNESDAY_0930_UTC): boolean => timeSpecMatches(parseTimeSpec(spec), when);

describe('time specifications', () => {
  test('each field narrows; * matches everything', () => {
    assert.equal(at('*,*,*,*,UTC'), true);
    assert.equal(at('09:00-17:00,mon-fri,*,*,UTC'), true);
    assert.equal(at('09:00-17:00,sat-sun,*,*,UTC'), false);
    assert.equal(at('*,*,18,mar,UTC'), true);
    assert.equal(at('*,*,19-31,*,UTC'), false);
    assert.equal(at('*,*,*,apr-dec,UTC'), false);
  });

  test('ends are included to the minute; ranges wrap round', () => {
    assert.equal(at('09:30-09:30,*,*,*,UTC'), true);
    assert.equal(at('09:31-09:29,*,*,*,UTC'), false, 'every minute but 09:30');
    assert.equal(at('22:00-09:30,*,*,*,UTC'), true);
    assert.equal(at('*,fri-wed,*,*,UTC'), true);
    assert.equal(at('*,thu-tue,*,*,UTC'), false);
    assert.equal(at('*,*,*,nov-mar,UTC'), true);
  });

  test('& joins ranges; names are case-insensitive; | separates fields too', () => {
    assert.equal(at('08:00-08:59&09:15-09:45,MON&Wed,*,*,UTC'), true);
    assert.equal(at('08:00-08:59,*,*,*,UTC'), false);
    assert.equal(at('*|wed|*|*|UTC'), true);
  });

  test('the timezone moves the clock', () => {
    // 09:30 UTC is 18:30 in Tokyo and 05:30 in New York (EDT).
    assert.equal(at('18:00-19:00,wed,18,mar,Asia/Tokyo'), true);
    assert.equal(at('05:30-05:30,wed,*,*,America/New_York'), true);
    assert.equal(at('09:30-09:30,*,*,*,America/New_York'), false);
  });

  test('malformed specs are refused with the field named', () => {
    for (const [spec, message] of [
      ['*,*,*', /expected times,weekdays,mdays,months/],
      ['25:00-26:00,*,*,*', /invalid time '25:00'/],
      ['*,funday,*,*', /invalid weekday 'funday'/],
      ['*,*,0,*', /invalid day of month '0'/],
      ['*,*,*,smarch', /invalid month 'smarch'/],
      ['*,*,*,*,Mars/Olympus', /unknown timezone/],
    ] as const) {
      assert.throws(() => parseTimeSpec(spec), (error: Error) => error instanceof TimeSpecError && message.test(error.message), spec);
    }
  });
});
