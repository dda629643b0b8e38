// The record store and the CSV writer alone: batched writes, retention by age and by rows, paging
// and filters, and Master.csv lines as cdr_csv writes them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../../../src/core/database.ts';
import { csvLine, CsvWriter } from '../../../src/core/cdr/csv-writer.ts';
import { RecordStore } from '../../../src/core/cdr/record-store.ts';
import type { CallDetailRecord } from '../../../src/core/cdr/record.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-cdr-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;

function record(fields: Partial<CallDetailRecord>): CallDetailRecord {
  return {
    accountcode: '', src: '100', dst: '200', dcontext: 'default', clid: '"Al" <100>', channel: 'PJSIP/a-1', dstchannel: 'PJSIP/b-2',
    lastapp: 'Dial', lastdata: 'PJSIP/b', start: 0, answer: 0, end: 0, duration: 0, billsec: 0, disposition: 'ANSWERED', amaflags: 'DOCUMENTATION',
    uniqueid: '1.1', linkedid: '1.1', userfield: '', peeraccount: '', sequence: 0, variables: {},
    ...fields,
  };
}

describe('RecordStore', () => {
  test('rows wait for the flush, then are written in one go; retention drops by age, then by rows', () => {
    let now = 100 * DAY;
    const errors: unknown[] = [];
    const store = new RecordStore({ days: 10, maxRows: 3 }, { days: 1, maxRows: 100 }, (e) => errors.push(e), () => now);
    const database = openDatabase(join(dir, 'a.sqlite'));
    store.attach(database);
    for (let i = 0; i < 6; i++) store.addCdr(record({ start: now - (i === 0 ? 20 * DAY : i * 1000), src: String(i), disposition: i % 2 ? 'BUSY' : 'ANSWERED' }));
    assert.equal((database.prepare('SELECT COUNT(*) AS n FROM cdr').get() as { n: number }).n, 0, 'nothing before the flush');
    store.flush();
    assert.equal(store.written, 6);
    assert.equal((database.prepare('SELECT COUNT(*) AS n FROM cdr').get() as { n: number }).n, 6);
    store.expire();
    const left = store.queryCdr({ limit: 100, offset: 0 });
    // The 20-day-old one went by age, then the oldest rows beyond 3.
    assert.deepEqual(left.records.map((r) => r.src), ['5', '4', '3']);
    const busy = store.queryCdr({ disposition: 'BUSY', limit: 100, offset: 0 });
    assert.deepEqual(busy.records.map((r) => r.src), ['5', '3']);
    const paged = store.queryCdr({ limit: 1, offset: 1 });
    assert.deepEqual([paged.total, paged.records.map((r) => r.src)], [3, ['4']]);
    const numbered = store.queryCdr({ number: '4', limit: 10, offset: 0 });
    assert.deepEqual(numbered.records.map((r) => r.src), ['4']);
    const window = store.queryCdr({ since: now - 4500, until: now - 3500, limit: 10, offset: 0 });
    assert.deepEqual(window.records.map((r) => r.src), ['4']);
    now += 1;
    store.close();
    database.close();
    assert.deepEqual(errors, []);
  });

  test('a store that cannot write keeps the rows queued, bounded', () => {
    const errors: unknown[] = [];
    const store = new RecordStore({ days: 1, maxRows: 100 }, { days: 1, maxRows: 100 }, (e) => errors.push(e));
    const database = openDatabase(join(dir, 'b.sqlite'));
    store.attach(database);
    database.exec('DROP TABLE cdr');
    store.addCdr(record({}));
    store.flush();
    assert.equal(errors.length, 1);
    assert.equal(store.pending, 1);
    store.close();
    database.close();
  });
});

describe('Master.csv', () => {
  test('the line cdr_csv writes: quoted fields, doubled quotes, an unset time as an empty field', () => {
    const start = new Date('2026-11-27T10:20:30Z').getTime();
    const line = csvLine(record({ start, end: start + 5000, duration: 5, billsec: 0, disposition: 'BUSY', clid: '"Al" <100>' }), { useGmtTime: true, logUniqueId: false, logUserField: false, accountLogs: true, newCdrColumns: false });
    assert.equal(line, '"","100","200","default","""Al"" <100>","PJSIP/a-1","PJSIP/b-2","Dial","PJSIP/b","2026-11-27 10:20:30",,"2026-11-27 10:20:35",5,0,"BUSY","DOCUMENTATION"\n');
    const all = csvLine(record({ userfield: 'u', peeraccount: 'p', sequence: 7 }), { useGmtTime: true, logUniqueId: true, logUserField: true, accountLogs: true, newCdrColumns: true });
    assert.match(all!, /,"DOCUMENTATION","1\.1","u","p","1\.1",7\n$/);
    assert.equal(csvLine(record({ lastdata: 'x'.repeat(2000) }), { useGmtTime: true, logUniqueId: false, logUserField: false, accountLogs: true, newCdrColumns: false }), undefined);
  });

  test('account files: one per safe account code; a code that could leave the directory is refused', async () => {
    const writer = new CsvWriter(join(dir, 'logs'), { useGmtTime: false, logUniqueId: false, logUserField: false, accountLogs: true, newCdrColumns: false }, (e) => assert.fail(String(e)));
    writer.add(record({ accountcode: 'sales' }));
    writer.add(record({ accountcode: '../../etc/evil' }));
    writer.add(record({ accountcode: '.hidden' }));
    await writer.flush();
    assert.equal(readFileSync(writer.master, 'utf8').split('\n').length, 4);
    assert.equal(readFileSync(join(dir, 'logs', 'cdr-csv', 'sales.csv'), 'utf8').split('\n').length, 2);
    assert.throws(() => readFileSync(join(dir, 'logs', 'cdr-csv', '.hidden.csv')));
  });
});
