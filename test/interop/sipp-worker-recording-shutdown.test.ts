// The server stopping while a media worker writes a recording (issue 25's recording fast path): the
// recording is taken back to be closed before the workers stop, finishes as on the main thread
// (done, reason shutdown), its hidden file of if_exists=overwrite is renamed into place, and the file
// holds the audio up to the stop. Its own server, as the stop is the test.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeWav } from '../../src/media/wav-reader.ts';
import { nextEvent, startSippServer, waitFor, writeSippTone, type Json } from './sipp-peer.ts';
import { callSdpElsewhere, NO_SIPP_OR_SOX, waitForWorkers, type SdpElsewhereCall } from './sipp-worker-calls.ts';

test('a recording the worker writes when the server stops: finished, renamed into place, the audio up to the stop', { skip: NO_SIPP_OR_SOX, timeout: 120_000 }, async () => {
  const { work, server, events } = await startSippServer('worker-recording-stop', ['[rec-in]', 'exten => 100,1,Answer()', ' same => n,Stasis(recstop)', ''].join('\n'), {
    endpoint: { recorder: { context: 'rec-in', allow: 'ulaw', aors: 'recorder', rtp_symmetric: 'no' } },
    aor: { recorder: { max_contacts: 1 } },
  }, 'recstop', { media: { workers: 1 } });
  let socket: dgram.Socket | undefined;
  try {
    writeSippTone(work, 300, 60, 0.4);
    await waitForWorkers(server);
    let run: SdpElsewhereCall['run'];
    ({ run, socket } = await callSdpElsewhere(`127.0.0.1:${server.core.pjsip.port}`, work, '100', 'recorder', { timeoutMs: 60_000 }));
    const start: Json = await nextEvent(events, (e) => e.type === 'StasisStart', 30_000);
    const directory = server.core.recordings.directory.root;
    assert.equal((await server.ari(`/channels/${start.channel.id}/record?name=at-stop&format=wav&ifExists=overwrite`, { method: 'POST' })).status, 201);
    await waitFor('the worker to write the recording', () => (server.core.recordings.list().some((recording) => recording.writtenElsewhere) ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // Read when the recording is final: the test server removes its data directory once stopped.
    let listing: string[] = [];
    let bytes: Buffer | undefined;
    const finished = server.core.recordings.list()[0].finished.then((recording) => {
      listing = readdirSync(directory);
      bytes = readFileSync(join(directory, 'at-stop.wav'));
      return recording;
    });
    await events.close();
    await server.stop();
    const recording = await finished;
    assert.equal(recording.state, 'done');
    assert.equal(recording.endReason, 'shutdown');
    assert.deepEqual(listing, ['at-stop.wav'], 'the hidden file was renamed into place');
    const seconds = decodeWav(new Uint8Array(bytes!)).samples.length / 8000;
    assert.ok(seconds > 2.3, `the audio up to the stop is in the file (${seconds.toFixed(2)} s)`);
    await run.done;
  } finally {
    socket?.close();
    rmSync(work, { recursive: true, force: true });
  }
});
