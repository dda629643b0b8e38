// SIP media in a media worker (media.workers: 1) against SIPp: a caller streaming a 1 kHz tone into
// Echo() hears the tone back, the stream is counted on the worker, and a worker that dies hangs
// its call up with cause 38 (the caller gets a BYE, the server keeps running and restarts the
// worker, whose next call echoes again). SIPp streams from its media port while its SDP names
// the test's socket (call-sdp-elsewhere.xml, rtp_symmetric=no): the test hears what the server sends.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { ulawToLinear } from '../../src/media/g711.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, sipp, startSippServer, waitFor, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';
import { callSdpElsewhere, NO_SIPP_OR_SOX, waitForWorkers } from './sipp-worker-calls.ts';

let setup: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer('media-workers', '[echo-in]\nexten => 100,1,Answer()\n same => n,Echo()\n', {
    endpoint: { echoer: { context: 'echo-in', allow: 'ulaw', aors: 'echoer', rtp_symmetric: 'no' } },
    aor: { echoer: { max_contacts: 1 } },
  }, 'watch', { media: { workers: 1 } });
  ({ work, server, events } = setup);
  writeSippTone(work, 1000, 30, 0.5);
  // Calls placed before the worker has loaded run on the main thread: the tests want it in the worker.
  await waitForWorkers(server);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

/** A call from SIPp into Echo(); `heard` collects the u-law payloads the server sends to the SDP's port. */
async function echoCall(): Promise<{ heard: Buffer[]; run: ReturnType<typeof sipp>; channelId: string; socket: dgram.Socket }> {
  const { heard, run, socket } = await callSdpElsewhere(target(), work, '100', 'echoer', { timeoutMs: 60_000, collect: true });
  const created = await nextEvent(events, (e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/echoer-'), 15_000);
  return { heard, run, channelId: created.channel.id as string, socket };
}

/** The 1 kHz tone's share of the energy in what was heard (the last `packets` packets). */
function toneShare(heard: readonly Buffer[], packets: number): number {
  const recent = heard.slice(-packets);
  const samples = new Int16Array(recent.length * 160);
  let at = 0;
  for (const payload of recent) for (const code of payload.subarray(0, 160)) samples[at++] = ulawToLinear(code);
  let total = 0;
  for (const sample of samples) total += sample * sample;
  const tone = goertzelPower(samples, 1000, 8000);
  return total > 0 ? tone / (total / samples.length) : 0;
}

describe('SIP media in a media worker', { skip: NO_SIPP_OR_SOX }, () => {
  test('a caller in Echo() hears its own 1 kHz tone back, and the stream runs in the worker', { timeout: 90_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers;
    assert.ok(pool, 'the technology runs media workers');
    const { heard, run, channelId, socket } = await echoCall();
    try {
      await waitFor('echoed audio', () => (heard.length >= 100 ? true : undefined), 30_000);
      assert.equal(pool.streams, 1);
      const share = toneShare(heard, 50);
      assert.ok(share > 0.5, `the echo is the caller's tone (1 kHz share ${share.toFixed(2)})`);
      await waitFor('the worker\'s load report', () => (pool.loads()[0].packetsOutPerSecond > 10 ? true : undefined), 10_000);
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` } })).text();
      assert.match(metrics, /^patchbay_media_worker_streams\{worker="0"\} 1$/m);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      const result = await run.done;
      assert.equal(result.status, 0, result.output);
    } finally {
      socket.close();
    }
    await waitFor('the stream to close', () => (pool.streams === 0 ? true : undefined));
  });

  test('a media worker that dies hangs its call up with cause 38, is restarted, and echoes the next call', { timeout: 120_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const first = await echoCall();
    try {
      await waitFor('echoed audio', () => (first.heard.length >= 25 ? true : undefined), 30_000);
      await pool.kill(0);
      const destroyed: Json = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === first.channelId, 15_000);
      assert.equal(destroyed.cause, 38);
      const result = await first.run.done;
      assert.equal(result.status, 0, `the caller got a BYE: ${result.output}`);
      assert.ok(server.logLines.some((line) => line.includes('media worker 0 died')), 'a loud log line');
    } finally {
      first.socket.close();
    }
    await waitFor('the restarted worker', () => (pool.loads()[0].running ? true : undefined), 30_000);
    const second = await echoCall();
    try {
      await waitFor('echoed audio after the restart', () => (second.heard.length >= 50 ? true : undefined), 30_000);
      assert.ok(toneShare(second.heard, 25) > 0.5);
      assert.equal((await server.ari(`/channels/${second.channelId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await second.run.done).status, 0);
    } finally {
      second.socket.close();
    }
  });
});
