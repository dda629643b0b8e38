// The call records' settings read again while the server runs (docs/cdr.md, "Configuration"):
// `patchbay reload` (module reload cdr) and SIGHUP (applyConfig) switch Master.csv and CEL on,
// change the retention and turn CDRs off, and no record is lost — not those already written, not
// the one of a call in progress across the reload, not those queued.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { DeepPartialYaml } from '../../../src/config/config.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../interop/sipp-peer.ts';

const DIALPLAN = `
[reload]
exten => short,1,Answer()
 same => n,Hangup()
exten => long,1,Answer()
 same => n,Wait(60)
`;

describe('call records reconfigured by a reload', () => {
  let work: string;
  let server: TestServer;
  let settings: DeepPartialYaml;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-records-reload-'));
    writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
    settings = { dialplan: { file: join(work, 'extensions.conf') }, cdr: { flush_ms: 20, csv: { enabled: false } }, cel: { enabled: false } };
    server = await startTestServer(settings, { reloadOverrides: () => settings });
  });

  after(async () => {
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const csvFile = (): string => join(server.config.dirs.logs, 'cdr-csv', 'Master.csv');

  async function records(): Promise<Array<{ dst: string; channel: string }>> {
    await server.core.records.flush();
    return server.core.records.queryCdr({ limit: 1000, offset: 0 }).records;
  }

  async function call(exten: string): Promise<string> {
    const response = await server.ari(`/channels?endpoint=${encodeURIComponent(`Local/${exten}@reload`)}&extension=${exten}&context=reload`, { method: 'POST' });
    assert.equal(response.status, 200);
    return ((await response.json()) as { id: string }).id;
  }

  const idle = (): Promise<true> => waitFor('every channel to end', () => (server.core.channels.size === 0 ? true : undefined), 15_000);

  test('module reload cdr: Master.csv and CEL switched on; a call in progress keeps its record; nothing written is lost', async () => {
    await call('short');
    await idle();
    const before = (await records()).length;
    assert.ok(before >= 1);
    assert.equal(existsSync(csvFile()), false, 'no Master.csv while cdr.csv is off');

    const long = await call('long');
    await waitFor('the long call up', () => (server.core.channels.get(long)?.state === 'Up' ? true : undefined));
    settings = { ...settings, cdr: { flush_ms: 20, csv: { enabled: true }, retention_days: 30 }, cel: { enabled: true, events: 'ALL' } };
    // What `patchbay reload` does for each reloadable module.
    assert.equal((await server.ari('/asterisk/modules/cdr', { method: 'PUT' })).status, 204);
    assert.equal((await server.ari(`/channels/${long}`, { method: 'DELETE' })).status, 204);
    await idle();

    const after = await records();
    assert.ok(after.length > before, `${after.length} records after, ${before} before`);
    assert.ok(after.some((r) => r.dst === 'long'), 'the call that spanned the reload has its record');
    await waitFor('Master.csv', () => (existsSync(csvFile()) && readFileSync(csvFile(), 'utf8').includes('"long"') ? true : undefined));
    const cel = server.core.records.queryCel({ limit: 1000, offset: 0 }).events.map((e) => e.eventtype);
    assert.ok(cel.includes('HANGUP') && cel.includes('CHAN_END'), `CEL ${cel.join(', ')}`);
    assert.equal(cel.includes('CHAN_START'), false, 'CEL starts with what happens after the reload');
  });

  test('SIGHUP (applyConfig): cdr.enabled=false is applied live, and the records already written stay', async () => {
    const before = (await records()).length;
    settings = { ...settings, cdr: { enabled: false, flush_ms: 20 } };
    const changes = server.applyConfig(server.configWith(settings));
    assert.ok(changes.live.includes('cdr.enabled'), JSON.stringify(changes));
    assert.equal(changes.atRestart.filter((key) => /^(cdr|cel)\./.test(key)).length, 0, JSON.stringify(changes));
    await waitFor('the reconfiguration', () => (server.core.records.enabled ? undefined : true));
    await call('short');
    await idle();
    assert.equal((await records()).length, before);
  });
});
