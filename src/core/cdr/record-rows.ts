// The `cdr` and `cel` tables as rows: their schema, the insert statements and a record's values in
// column order. Shared by the store on the main thread and the writer thread
// (record-writer-worker.ts), so the two write the same rows the same way.
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../database.ts';
import type { CallDetailRecord, CelEvent } from './record.ts';

export const CDR_COLUMNS = [
  'accountcode', 'src', 'dst', 'dcontext', 'clid', 'channel', 'dstchannel', 'lastapp', 'lastdata', 'start', 'answer', 'end',
  'duration', 'billsec', 'disposition', 'amaflags', 'uniqueid', 'linkedid', 'userfield', 'peeraccount', 'sequence', 'variables',
] as const;
export const CEL_COLUMNS = [
  'eventtype', 'eventtime', 'userdeftype', 'cid_name', 'cid_num', 'cid_ani', 'cid_rdnis', 'cid_dnid', 'exten', 'context', 'channame',
  'appname', 'appdata', 'amaflags', 'accountcode', 'peeraccount', 'uniqueid', 'linkedid', 'userfield', 'peer', 'extra',
] as const;

/** Rows one transaction writes at most: about 20 ms of the event loop (of the writer thread's, when it writes). */
export const MAX_ROWS_PER_TRANSACTION = 2000;

/** One row's values in column order (what an insert binds). */
export type RowValues = (string | number)[];

const quoted = (names: readonly string[]): string => names.map((name) => `"${name}"`).join(', ');

export function createRecordTables(database: SqliteDatabase): void {
  database.exec(`CREATE TABLE IF NOT EXISTS cdr (id INTEGER PRIMARY KEY AUTOINCREMENT,
    accountcode TEXT, src TEXT, dst TEXT, dcontext TEXT, clid TEXT, channel TEXT, dstchannel TEXT, lastapp TEXT, lastdata TEXT,
    start INTEGER, answer INTEGER, "end" INTEGER, duration INTEGER, billsec INTEGER, disposition TEXT, amaflags TEXT,
    uniqueid TEXT, linkedid TEXT, userfield TEXT, peeraccount TEXT, sequence INTEGER, variables TEXT)`);
  database.exec('CREATE INDEX IF NOT EXISTS cdr_start ON cdr (start)');
  database.exec(`CREATE TABLE IF NOT EXISTS cel (id INTEGER PRIMARY KEY AUTOINCREMENT,
    eventtype TEXT, eventtime INTEGER, userdeftype TEXT, cid_name TEXT, cid_num TEXT, cid_ani TEXT, cid_rdnis TEXT, cid_dnid TEXT,
    exten TEXT, context TEXT, channame TEXT, appname TEXT, appdata TEXT, amaflags INTEGER, accountcode TEXT, peeraccount TEXT,
    uniqueid TEXT, linkedid TEXT, userfield TEXT, peer TEXT, extra TEXT)`);
  database.exec('CREATE INDEX IF NOT EXISTS cel_time ON cel (eventtime)');
  database.exec('CREATE INDEX IF NOT EXISTS cel_linkedid ON cel (linkedid)');
}

export interface InsertStatements {
  readonly insertCdr: Statement;
  readonly insertCel: Statement;
}

/** The inserts, through the database's kept statements (prepared once per database). */
export function insertStatements(database: SqliteDatabase): InsertStatements {
  return {
    insertCdr: database.prepare(`INSERT INTO cdr (${quoted(CDR_COLUMNS)}) VALUES (${CDR_COLUMNS.map(() => '?').join(', ')})`),
    insertCel: database.prepare(`INSERT INTO cel (${quoted(CEL_COLUMNS)}) VALUES (${CEL_COLUMNS.map(() => '?').join(', ')})`),
  };
}

export function cdrRow(r: CallDetailRecord): RowValues {
  return [
    r.accountcode, r.src, r.dst, r.dcontext, r.clid, r.channel, r.dstchannel, r.lastapp, r.lastdata, r.start, r.answer, r.end,
    r.duration, r.billsec, r.disposition, r.amaflags, r.uniqueid, r.linkedid, r.userfield, r.peeraccount, r.sequence, JSON.stringify(r.variables),
  ];
}

export function celRow(e: CelEvent): RowValues {
  return CEL_COLUMNS.map((column) => e[column]);
}

/** Writes rows in one transaction (the caller bounds how many); throws what SQLite throws. */
export function writeRows(database: SqliteDatabase, statements: InsertStatements, cdrs: readonly RowValues[], cels: readonly RowValues[]): void {
  database.transaction(() => {
    for (const row of cdrs) statements.insertCdr.run(...row);
    for (const row of cels) statements.insertCel.run(...row);
  })();
}
