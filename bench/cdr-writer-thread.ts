// What a CDR row costs the main thread with and without the writer thread (cdr.sqlite_thread):
// the record store alone, fed records of the originate cycle's size, flushed in batches as the
// server's timer does, alternating the two modes per round. Reports the main thread's CPU per row
// (from /proc/self/task/<pid>/stat, 10 ms steps: many rows per round) and the process's.
// Usage: npx tsx bench/cdr-writer-thread.ts [--rows 100000 --rounds 4 --batch 1600]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/core/database.ts';
import { RecordStore } from '../src/core/cdr/record-store.ts';
import type { CallDetailRecord } from '../src/core/cdr/record.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '4' }, batch: { type: 'string', default: '1600' } } });
const rows = Math.min(Math.max(Number(values.rows) || 100_000, 1000), 2_000_000);
const rounds = Math.min(Math.max(Number(values.rounds) || 4, 1), 20);
const batch = Math.min(Math.max(Number(values.batch) || 1600, 1), 2000);

function mainThreadUs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const processUs = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** A record shaped like the originate cycle's (a Local half). */
function record(i: number): CallDetailRecord {
  const now = Date.now();
  return {
    accountcode: '', src: '', dst: 'answer', dcontext: 'default', clid: '', channel: `Local/answer@default-${(i >>> 0).toString(16).padStart(8, '0')};2`,
    dstchannel: '', lastapp: 'Wait', lastdata: '3600', start: now, answer: now, end: now + 12, duration: 0, billsec: 0, disposition: 'ANSWERED',
    amaflags: 'DOCUMENTATION', uniqueid: `1764268800.${i}`, linkedid: `1764268800.${i - (i % 2)}`, userfield: '', peeraccount: '', sequence: i, variables: {},
  };
}

const dir = mkdtempSync(join(os.tmpdir(), 'patchbay-cdr-thread-bench-'));
const retention = { days: 30, maxRows: 10_000_000 };
try {
  for (let round = 0; round < rounds; round++) {
    for (const thread of round % 2 === 0 ? [false, true] : [true, false]) {
      const database = openDatabase(join(dir, `r${round}-${thread}.sqlite`));
      const store = new RecordStore(retention, retention, (error) => console.error(error));
      store.attach(database, { thread });
      // The thread's start (its module loading) is not a row's cost.
      store.addCdr(record(0));
      store.flush();
      const main0 = mainThreadUs();
      const process0 = processUs();
      const began = performance.now();
      for (let i = 1; i <= rows; i++) {
        store.addCdr(record(i));
        if (i % batch === 0) while (store.waiting > 0) store.flushBatch();
      }
      const mainUs = mainThreadUs() - main0;
      store.flush();
      const processAfter = processUs() - process0;
      const seconds = (performance.now() - began) / 1000;
      console.log(
        `round ${round + 1} ${thread ? 'thread' : 'inline'}: main thread ${(mainUs / rows).toFixed(2)} µs/row (before the last wait), process ${(processAfter / rows).toFixed(2)} µs/row, ${(rows / seconds).toFixed(0)} rows/s, load ${os.loadavg()[0]!.toFixed(2)}`,
      );
      store.close();
      await store.closed;
      database.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
