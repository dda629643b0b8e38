// Master.csv lines and CDR times built without per-field copies (issue 25) are the lines cdr_csv
// writes: compared with a plain reference (an array of quoted fields joined by commas, each time
// formatted from its Date) over quotes, empty times, every column option, and times that alternate
// between seconds, local and UTC, so the remembered second never leaks into another one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvLine, type CsvOptions } from '../../../src/core/cdr/csv-writer.ts';
import { formatCdrTime, type CallDetailRecord } from '../../../src/core/cdr/record.ts';

const pad = (n: number): string => String(n).padStart(2, '0');

function referenceTime(ms: number, utc: boolean): string {
  if (!ms) return '';
  const d = new Date(ms);
  return utc
    ? `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function referenceLine(r: CallDetailRecord, options: CsvOptions): string {
  const quote = (value: string): string => `"${value.replace(/"/g, '""')}"`;
  const date = (ms: number): string => (ms ? quote(referenceTime(ms, options.useGmtTime)) : '');
  const fields = [
    quote(r.accountcode), quote(r.src), quote(r.dst), quote(r.dcontext), quote(r.clid), quote(r.channel), quote(r.dstchannel), quote(r.lastapp), quote(r.lastdata),
    date(r.start), date(r.answer), date(r.end), String(r.duration), String(r.billsec), quote(r.disposition), quote(r.amaflags),
  ];
  if (options.logUniqueId) fields.push(quote(r.uniqueid));
  if (options.logUserField) fields.push(quote(r.userfield));
  if (options.newCdrColumns) fields.push(quote(r.peeraccount), quote(r.linkedid), String(r.sequence));
  return `${fields.join(',')}\n`;
}

function record(fields: Partial<CallDetailRecord>): CallDetailRecord {
  return {
    accountcode: 'acc', src: '100', dst: '200', dcontext: 'default', clid: '"Al ""x""" <100>', channel: 'PJSIP/a-1', dstchannel: 'PJSIP/b-2',
    lastapp: 'Dial', lastdata: 'PJSIP/b,30,"t"', start: 1_764_000_000_123, answer: 1_764_000_000_900, end: 1_764_000_005_001, duration: 5, billsec: 4,
    disposition: 'ANSWERED', amaflags: 'DOCUMENTATION', uniqueid: '1.1', linkedid: '1.0', userfield: 'u"f', peeraccount: 'p', sequence: 7, variables: {},
    ...fields,
  };
}

test('CDR times are formatted per second, local and UTC alike, whatever came before', () => {
  const times = [1_764_000_000_000, 1_764_000_000_999, 1_764_000_001_000, 1_764_000_000_500, 1_000, 999, -1_500, -500, 1_764_000_000_001];
  for (const utc of [false, true, false]) {
    for (const ms of times) {
      assert.equal(formatCdrTime(ms, utc), referenceTime(ms, utc), `${ms} ${utc}`);
      assert.equal(formatCdrTime(ms, !utc), referenceTime(ms, !utc), `${ms} ${!utc}`);
    }
  }
  assert.equal(formatCdrTime(0), '');
});

test('Master.csv lines are the reference lines for every column option', () => {
  const records = [
    record({}),
    record({ answer: 0, billsec: 0, disposition: 'NO ANSWER' }),
    record({ start: 0, answer: 0, end: 0 }),
    record({ accountcode: '', clid: '', lastdata: '' }),
    record({ amaflags: 'BILLING', dst: 'é"x' }),
  ];
  for (const useGmtTime of [false, true]) {
    for (const logUniqueId of [false, true]) {
      for (const logUserField of [false, true]) {
        for (const newCdrColumns of [false, true]) {
          const options: CsvOptions = { useGmtTime, logUniqueId, logUserField, accountLogs: false, newCdrColumns };
          for (const r of records) assert.equal(csvLine(r, options), referenceLine(r, options));
        }
      }
    }
  }
});
