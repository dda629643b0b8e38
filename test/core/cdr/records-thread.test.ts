// A server whose call records are written by the writer thread (cdr.sqlite_thread): calls' records
// reach the read API after a flush, a reload turns the thread off and on with nothing lost, and the
// server's stop waits for the thread before the database closes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DeepPartialYaml } from '../../../src/config/config.ts';
import { databasePath, openDatabase } from '../../../src/core/database.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../interop/sipp-peer.ts';

const DIALPLAN = `
[thread]
exten => short,1,Answer()
 same => n,Hangup()
`;

describe('call records through the writer thread', () => {
  let work: string;
  let server: TestServer | undefined;
  let settings: DeepPartialYaml;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-records-thread-'));
    writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
    settings = { dialplan: { file: join(work, 'extensions.conf') }, cdr: { flush_ms: 20, sqlite_thread: true, csv: { enabled: false } }, cel: { enabled: true, events: 'ALL' } };
    // The test's own data directory: it stays after the stop, for the last test to read.
    server = await startTestServer(settings, { reloadOverrides: () => settings, dataDir: join(work, 'data') });
  });

  after(async () => {
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  async function calls(count: number): Promise<void> {
    const running = server!;
    for (let i = 0; i < count; i++) {
      const response = await running.ari(`/channels?endpoint=${encodeURIComponent('Local/short@thread')}&extension=short&context=thread`, { method: 'POST' });
      assert.equal(response.status, 200);
    }
    await waitFor('every channel to end', () => (running.core.channels.size === 0 ? true : undefined), 15_000);
  }

  const recordCount = async (): Promise<number> => {
    await server!.core.records.flush();
    return server!.core.records.queryCdr({ limit: 1000, offset: 0 }).total;
  };

  test('records and CEL events reach the read API; a reload switches the thread off and on with nothing lost', async () => {
    const running = server!;
    assert.equal(running.core.records.store.threaded, true);
    await calls(3);
    // Each Local call leaves two records (one per half).
    assert.equal(await recordCount(), 6);
    const cel = running.core.records.queryCel({ limit: 1000, offset: 0 }).events.map((e) => e.eventtype);
    assert.ok(cel.includes('CHAN_START') && cel.includes('CHAN_END'), `CEL ${cel.join(', ')}`);

    settings = { ...settings, cdr: { flush_ms: 20, sqlite_thread: false, csv: { enabled: false } } };
    assert.equal((await running.ari('/asterisk/modules/cdr', { method: 'PUT' })).status, 204);
    await waitFor('the thread switched off', () => (running.core.records.store.threaded ? undefined : true));
    await calls(1);
    assert.equal(await recordCount(), 8);

    settings = { ...settings, cdr: { flush_ms: 20, sqlite_thread: true, csv: { enabled: false } } };
    assert.equal((await running.ari('/asterisk/modules/cdr', { method: 'PUT' })).status, 204);
    await waitFor('the thread switched on', () => (running.core.records.store.threaded ? true : undefined));
    await calls(1);
    assert.equal(await recordCount(), 10);
    assert.equal(running.core.records.store.dropped, 0);
  });

  test("the server's stop writes what is queued through the thread before the database closes", async () => {
    const running = server!;
    await calls(2);
    // Not flushed: the stop must write these.
    await running.stop();
    server = undefined;
    const database = openDatabase(databasePath(join(work, 'data')));
    try {
      assert.equal((database.prepare('SELECT COUNT(*) AS n FROM cdr').get() as { n: number }).n, 14);
    } finally {
      database.close();
    }
  });
});
