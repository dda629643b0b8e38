// What a killed server or a full disk leaves (issue 21, item 19): hidden `.partial` recordings are
// finished and moved to their names at start (a WAV header describing every sample on disk) and
// named in the log; a full disk fails each recording once, with one error line for all of them
// rather than a stack trace on every media tick.
import assert from 'node:assert/strict';
import fs, { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { buildPcm16MonoHeader } from '../../src/media/wav.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { unlessCluster } from '../helpers/cluster-server.ts';
import { nextEvent, pair } from './playback-helpers.ts';
import { parseWav, sleep } from './recordings-helpers.ts';

const APP = 'recovery-app';

describe('partial recordings left by a killed server', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-recovery-'));
  let server: TestServer | undefined;
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('are finished, moved to their names (beside a taken one), listed; empty ones removed', async () => {
    const recordings = join(dataDir, 'recordings');
    mkdirSync(join(recordings, 'sub'), { recursive: true });
    // A header written at open and never patched (sizes 0), then 1600 samples and a torn half-sample.
    const samples = Buffer.alloc(3201, 7);
    writeFileSync(join(recordings, 'sub', '.call.wav.0123456789ab.partial'), Buffer.concat([buildPcm16MonoHeader(8000, 0), samples]));
    writeFileSync(join(recordings, '.taken.ulaw.aaaaaaaaaaaa.partial'), Buffer.alloc(800, 0xff));
    writeFileSync(join(recordings, 'taken.ulaw'), Buffer.alloc(80, 0xff));
    writeFileSync(join(recordings, '.empty.wav.bbbbbbbbbbbb.partial'), '');
    server = await startTestServer({}, { dataDir });

    const call = parseWav(readFileSync(join(recordings, 'sub', 'call.wav')));
    assert.equal(call.dataSize, 3200, 'every whole sample is described by the header');
    assert.equal(readFileSync(join(recordings, 'taken-recovered-aaaaaaaaaaaa.ulaw')).length, 800);
    assert.equal(readFileSync(join(recordings, 'taken.ulaw')).length, 80, 'the file of that name is left as it was');
    assert.deepEqual(readdirSync(recordings).filter((name) => name.endsWith('.partial')), []);
    const stored = (await (await server.ari('/recordings/stored')).json()) as { name: string }[];
    assert.deepEqual(stored.map((s) => s.name).sort(), ['sub/call', 'taken', 'taken-recovered-aaaaaaaaaaaa']);
    const line = server.logLines.find((l) => l.includes('recovered 2 recording'));
    assert.ok(line, 'the recovery is logged');
    assert.match(line!, /sub\/call\.wav/);
  });
});

describe('a full disk', () => {
  let server: TestServer;
  after(() => server?.stop());

  test('fails each recording once, with one rate-limited error line and no stack traces', unlessCluster('counts log lines that each member rate-limits on its own (A and C log one each)'), async () => {
    server = await startTestServer();
    const events = await server.events(`app=${APP}`);
    const ids = ['full-a', 'full-b', 'full-c'];
    for (const id of ids) await pair(server, events, APP, id);
    const realWriteSync = fs.writeSync;
    try {
      for (const id of ids) {
        const response = await server.ari(`/channels/${id}/record?name=${id}&format=wav`, { method: 'POST' });
        assert.equal(response.status, 201);
        await nextEvent(events, (event) => event.type === 'RecordingStarted' && event.recording?.name === id);
      }
      const before = server.logLines.length;
      // Every write from now on finds the disk full.
      fs.writeSync = (() => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }) as typeof fs.writeSync;
      syncBuiltinESMExports();
      for (const id of ids) await nextEvent(events, (event) => event.type === 'RecordingFailed' && event.recording?.name === id, 6000);
      await sleep(500);
      const lines = server.logLines.slice(before);
      const full = lines.filter((l) => l.includes('disk is full'));
      assert.ok(full.length >= 1 && full.length <= 2, `${full.length} disk-full lines:\n${lines.join('')}`);
      assert.ok(lines.length <= 6, `${lines.length} log lines:\n${lines.join('')}`);
      assert.ok(!lines.some((l) => l.includes('"stack"')), 'no stack trace');
    } finally {
      fs.writeSync = realWriteSync;
      syncBuiltinESMExports();
      await events.close();
    }
  });
});
