// The record store with its writer thread (cdr.sqlite_thread): rows handed over are found by a read
// right after a flush, hostile text comes back as it went in, a failing write keeps its rows and
// tries again, the store can switch back to writing itself, and closing writes everything.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../../../src/core/database.ts';
import { RecordStore } from '../../../src/core/cdr/record-store.ts';
import { createRecordTables } from '../../../src/core/cdr/record-rows.ts';
import type { CallDetailRecord, CelEvent } from '../../../src/core/cdr/record.ts';

const dir = mkdtempSync(join(tmpdir(), 'patchbay-cdr-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const RETENTION = { days: 30, maxRows: 1000 };

function record(fields: Partial<CallDetailRecord>): CallDetailRecord {
  return {
    accountcode: '', src: '100', dst: '200', dcontext: 'default', clid: '"Al" <100>', channel: 'PJSIP/a-1', dstchannel: 'PJSIP/b-2',
    lastapp: 'Dial', lastdata: 'PJSIP/b', start: Date.now(), answer: 0, end: 0, duration: 0, billsec: 0, disposition: 'ANSWERED', amaflags: 'DOCUMENTATION',
    uniqueid: '1.1', linkedid: '1.1', userfield: '', peeraccount: '', sequence: 0, variables: {},
    ...fields,
  };
}

function celEvent(fields: Partial<CelEvent>): CelEvent {
  return {
    eventtype: 'CHAN_START', eventtime: Date.now(), userdeftype: '', cid_name: '', cid_num: '', cid_ani: '', cid_rdnis: '', cid_dnid: '', exten: 's',
    context: 'default', channame: 'PJSIP/a-1', appname: '', appdata: '', amaflags: 3, accountcode: '', peeraccount: '', uniqueid: '1.1',
    linkedid: '1.1', userfield: '', peer: '', extra: '',
    ...fields,
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Text no peer should be able to break a row with: quotes, separators, control characters, a lone surrogate, astral characters. */
const HOSTILE = ['"\',;\n\r\t', '\u0000nul', 'lone \ud800 surrogate', '😀 \u2028\u2029', '\\"]}'];

describe('RecordStore with a writer thread', () => {
  test('a read right after the flush finds every row, hostile text as the store writing itself keeps it', async () => {
    const errors: unknown[] = [];
    const store = new RecordStore(RETENTION, RETENTION, (e) => errors.push(e));
    const database = openDatabase(join(dir, 'a.sqlite'));
    store.attach(database, { thread: true });
    assert.equal(store.threaded, true);
    HOSTILE.forEach((text, i) => store.addCdr(record({ src: String(i), clid: text, lastdata: text, variables: { [text]: text } })));
    store.addCel(celEvent({ appdata: HOSTILE[0], extra: '{"a":1}' }));
    assert.equal(store.pending, HOSTILE.length + 1);
    store.flush();
    assert.equal(store.pending, 0);
    assert.equal(store.written, HOSTILE.length + 1);
    const { records, total } = store.queryCdr({ limit: 100, offset: 0 });
    assert.equal(total, HOSTILE.length);
    // The same records written by a store without a thread: the rows must match (SQLite's UTF-8
    // turns a lone surrogate into U+FFFD either way; everything else comes back as it went in).
    const inline = new RecordStore(RETENTION, RETENTION, (e) => errors.push(e));
    const inlineDatabase = openDatabase(join(dir, 'a-inline.sqlite'));
    inline.attach(inlineDatabase);
    HOSTILE.forEach((text, i) => inline.addCdr(record({ src: String(i), clid: text, lastdata: text, variables: { [text]: text } })));
    const expected = inline.queryCdr({ limit: 100, offset: 0 }).records;
    assert.deepEqual(records.map(({ start: _s, ...rest }) => rest), expected.map(({ start: _s, ...rest }) => rest));
    for (const found of records.filter((r) => !r.clid.startsWith('lone'))) {
      const text = HOSTILE[Number(found.src)];
      assert.deepEqual([found.clid, found.lastdata, found.variables], [text, text, { [text]: text }]);
    }
    inline.close();
    inlineDatabase.close();
    // A read with no flush before it finds what was queued too (the query flushes).
    store.addCdr(record({ src: 'late' }));
    assert.equal(store.queryCdr({ number: 'late', limit: 10, offset: 0 }).total, 1);
    assert.deepEqual(store.queryCel({ limit: 10, offset: 0 }).events.map((e) => e.appdata), [HOSTILE[0]]);
    store.close();
    await store.closed;
    database.close();
    assert.deepEqual(errors, []);
  });

  test('the timer-driven batch is handed over without waiting; close writes it and ends the thread', async () => {
    const store = new RecordStore(RETENTION, RETENTION, (e) => assert.fail(String(e)));
    const file = join(dir, 'b.sqlite');
    const database = openDatabase(file);
    store.attach(database, { thread: true });
    for (let i = 0; i < 2500; i++) store.addCdr(record({ src: String(i) }));
    assert.equal(store.flushBatch(), true);
    assert.equal(store.waiting, 500, 'one bounded batch handed');
    store.close();
    await store.closed;
    database.close();
    const reader = openDatabase(file);
    assert.equal((reader.prepare('SELECT COUNT(*) AS n FROM cdr').get() as { n: number }).n, 2500);
    reader.close();
  });

  test('a write that fails keeps its rows and is tried again; retention runs in order after the rows', async () => {
    const errors: unknown[] = [];
    const store = new RecordStore({ days: 10, maxRows: 2 }, RETENTION, (e) => errors.push(e));
    const database = openDatabase(join(dir, 'c.sqlite'));
    store.attach(database, { thread: true });
    store.addCdr(record({ src: 'first' }));
    store.flush();
    database.exec('DROP TABLE cdr');
    store.addCdr(record({ src: 'kept' }));
    store.flush();
    await until(() => errors.length > 0, 'the thread to report the failed write');
    assert.match(String(errors[0]), /no such table: cdr/);
    assert.equal(store.pending, 1, 'the row waits in the thread');
    createRecordTables(database);
    await until(() => store.pending === 0, 'the retry');
    assert.deepEqual(store.queryCdr({ limit: 10, offset: 0 }).records.map((r) => r.src), ['kept']);
    for (let i = 0; i < 4; i++) store.addCdr(record({ src: String(i), start: Date.now() - (i === 0 ? 20 * 86_400_000 : 0) }));
    store.flush();
    store.expire();
    // The sweep is handed after the rows; the next flush waits for both.
    store.flush();
    assert.deepEqual(store.queryCdr({ limit: 10, offset: 0 }).records.map((r) => r.src), ['3', '2']);
    store.close();
    await store.closed;
    database.close();
  });

  test('a thread that cannot start hands its batches back: the store writes them itself, nothing lost', async () => {
    const errors: unknown[] = [];
    const store = new RecordStore(RETENTION, RETENTION, (e) => errors.push(e));
    const database = openDatabase(join(dir, 'e.sqlite'));
    store.attach(database, { thread: true });
    // Gone before the thread (still loading) prepares its insert: it reports and ends.
    database.exec('DROP TABLE cdr');
    store.addCdr(record({ src: 'handed back' }));
    store.flush();
    assert.equal(store.threaded, false);
    assert.equal(store.pending, 1, 'not lost: back in the queue (the store itself could not write it either)');
    createRecordTables(database);
    store.flush();
    assert.deepEqual(store.queryCdr({ limit: 10, offset: 0 }).records.map((r) => r.src), ['handed back']);
    assert.equal(store.dropped, 0);
    await until(() => errors.some((e) => /could not open the database/.test(String(e))), 'the thread to report why it ended');
    store.close();
    await store.closed;
    database.close();
  });

  test('switched off, the store writes itself again and its totals carry on', async () => {
    const store = new RecordStore(RETENTION, RETENTION, (e) => assert.fail(String(e)));
    const database = openDatabase(join(dir, 'd.sqlite'));
    store.attach(database, { thread: true });
    store.addCdr(record({ src: 'through the thread' }));
    store.useThread(false);
    assert.equal(store.threaded, false);
    assert.equal(store.written, 1, 'written before the switch');
    store.addCdr(record({ src: 'here' }));
    store.flush();
    assert.equal(store.written, 2);
    assert.equal(store.queryCdr({ limit: 10, offset: 0 }).total, 2);
    store.useThread(true);
    store.addCdr(record({ src: 'through a new thread' }));
    assert.equal(store.queryCdr({ limit: 10, offset: 0 }).total, 3);
    assert.equal(store.written, 3);
    store.close();
    await store.closed;
    database.close();
  });

  test('a database without a file (in memory) is written by the store itself', () => {
    const store = new RecordStore(RETENTION, RETENTION, (e) => assert.fail(String(e)));
    const database = openDatabase(':memory:');
    store.attach(database, { thread: true });
    assert.equal(store.threaded, false);
    store.addCdr(record({}));
    assert.equal(store.queryCdr({ limit: 10, offset: 0 }).total, 1);
    store.close();
    database.close();
  });
});
