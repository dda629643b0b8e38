// Opus calls in a media worker (media.workers: 1, media.worker_opus on) against a real softphone:
// baresip with its opus module calls Echo() saying a 6 kHz tone. The endpoint's dtmf_mode is inband,
// so Echo() cannot send the packets back as they came: the worker decodes every packet (Opus's
// WebAssembly build there) and encodes the echo back — both directions of Opus coded in the worker.
// The 6 kHz tone coming back, and most of what comes back, shows it; the stream is counted on the
// worker (GET /metrics). Then a worker that dies under an Opus call ends that call with cause 38,
// the server goes on (it answers ARI, its worker restarts) and the next Opus call echoes again.
// With media.worker_opus off, an endpoint that allows Opus and PCMU keeps a call offering Opus on
// the main thread and sends one offering only PCMU to the worker.
// Skipped with a message when baresip or one of its modules is missing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { HAVE_BARESIP } from '../helpers/baresip.ts';
import { BaresipParty, MISSING_PARTY_MODULES } from '../helpers/baresip-party.ts';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { nextEvent, ofChannel, startSippServer, waitFor, type Json, type SippServer } from './sipp-peer.ts';
import { waitForWorkers } from './sipp-worker-calls.ts';

const TONE_HZ = 6000;
const skip = !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : MISSING_PARTY_MODULES.length > 0 ? `baresip modules missing: ${MISSING_PARTY_MODULES.join(', ')}` : false;

const ECHO_DIALPLAN = '[sip-in]\nexten => 600,1,Answer()\n same => n,Set(FORMAT=${CHANNEL(audionativeformat)})\n same => n,Echo()\n';

let started: SippServer | undefined;
let work: string;
let server: TestServer;
let events: EventSocket;
let parties = 0;

/** A server with one media worker (Opus in it or not) whose alice calls Echo() at 600; resolves once the worker runs. */
async function startEchoServer(name: string, workerOpus: boolean, alice: Json): Promise<void> {
  started = await startSippServer(name, ECHO_DIALPLAN, { endpoint: { alice: { context: 'sip-in', ...alice } } }, 'watch', { media: { workers: 1, worker_opus: workerOpus } });
  ({ work, server, events } = started);
  // A call placed before the worker has loaded runs on the main thread: these tests want it in the worker.
  await waitForWorkers(server);
}

async function stopEchoServer(): Promise<void> {
  await started?.close();
  started = undefined;
}

/** The next event of `type` for the channel, whatever else comes first. */
function nextEventOf(type: string, channelId: string, timeoutMs = 20_000): Promise<Json> {
  return nextEvent(events, ofChannel(type, channelId), timeoutMs);
}

/** A baresip (on Opus unless told) calling the Echo() extension; resolves once its channel is up. */
async function opusCall(codec: 'opus/48000/2' | 'PCMU/8000/1' = 'opus/48000/2'): Promise<{ party: BaresipParty; channelId: string }> {
  parties += 1;
  const party = new BaresipParty({ user: 'alice', codec, source: `ausine,${TONE_HZ}` }, join(work, `party-${parties}`));
  await party.start(server.core.pjsip.port);
  try {
    const known = new Set(((await (await server.ari('/channels')).json()) as Array<{ id: string }>).map((channel) => channel.id));
    await party.dial(`sip:600@127.0.0.1:${server.core.pjsip.port}`);
    const channel = await waitFor('baresip\'s channel', async () => {
      const list = (await (await server.ari('/channels')).json()) as Array<{ id: string; name: string; state: string }>;
      return list.find((entry) => entry.name.startsWith('PJSIP/alice-') && !known.has(entry.id) && entry.state === 'Up');
    }, 30_000);
    return { party, channelId: channel.id };
  } catch (error) {
    await party.stop();
    throw new Error(`${(error as Error).message}\nbaresip said:\n${party.output.slice(-2000)}`);
  }
}

/** The tone's share of the last two seconds baresip heard. */
function toneShareHeard(party: BaresipParty): { share: number; total: number } {
  const heard = party.heard();
  const tail = heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate));
  const total = meanSquare(tail);
  return { share: total > 0 ? goertzelPower(tail, TONE_HZ, heard.rate) / total : 0, total };
}

describe('Opus calls in a media worker, against baresip', { skip }, () => {
  before(() => startEchoServer('opus-worker', true, { allow: 'opus', dtmf_mode: 'inband' }));
  after(stopEchoServer);

  test('baresip\'s 6 kHz tone comes back through the worker\'s Opus decoder and encoder; the stream is counted on the worker', { timeout: 120_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const { party, channelId } = await opusCall();
    try {
      const format = (await (await server.ari(`/channels/${channelId}/variable?variable=FORMAT`)).json()) as { value: string };
      assert.equal(format.value, 'opus', 'the channel runs Opus');
      assert.equal(pool.streams, 1, 'the call\'s stream runs in the worker');
      await waitFor('the worker\'s load report', () => (pool.loads()[0].packetsOutPerSecond > 10 && pool.loads()[0].packetsInPerSecond > 10 ? true : undefined), 20_000);
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` } })).text();
      assert.match(metrics, /^patchbay_media_worker_streams\{worker="0"\} 1$/m);
      // Three seconds of echo, then what baresip heard.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await party.hangup();
      await nextEventOf('ChannelDestroyed', channelId);
      const { share, total } = toneShareHeard(party);
      assert.ok(total > 1e5, `something came back (mean square ${total.toFixed(0)})`);
      assert.ok(share > 0.5, `6 kHz is ${(share * 100).toFixed(0)} % of what baresip hears`);
    } finally {
      await party.stop();
    }
    await waitFor('the stream to close', () => (pool.streams === 0 ? true : undefined), 30_000);
  });

  test('a media worker that dies under an Opus call ends it with cause 38; the server goes on and the next Opus call echoes', { timeout: 180_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const first = await opusCall();
    try {
      assert.equal(pool.streams, 1, 'the call\'s stream runs in the worker');
      await waitFor('Opus coded in the worker', () => (pool.loads()[0].packetsOutPerSecond > 10 ? true : undefined), 20_000);
      const restartsBefore = pool.loads()[0].restarts;
      await pool.kill(0);
      const destroyed = await nextEventOf('ChannelDestroyed', first.channelId);
      assert.equal(destroyed.cause, 38);
      assert.ok(server.logLines.some((line) => line.includes('media worker 0 died')), 'a loud log line');
      // The process is alive and serving: ARI answers, and the worker comes back.
      assert.equal((await server.ari('/asterisk/ping')).status, 200);
      await waitFor('the restarted worker', () => (pool.loads()[0].running && pool.loads()[0].restarts === restartsBefore + 1 ? true : undefined), 60_000);
    } finally {
      await first.party.stop();
    }
    const second = await opusCall();
    try {
      assert.equal(pool.streams, 1, 'the next call\'s stream runs in the restarted worker');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await second.party.hangup();
      await nextEventOf('ChannelDestroyed', second.channelId);
      const { share } = toneShareHeard(second.party);
      assert.ok(share > 0.5, `after the restart, 6 kHz is ${(share * 100).toFixed(0)} % of what baresip hears`);
    } finally {
      await second.party.stop();
    }
  });
});

describe('media.worker_opus off: only a call that may agree on Opus stays on the main thread', { skip }, () => {
  before(() => startEchoServer('opus-main', false, { allow: 'opus,ulaw' }));
  after(stopEchoServer);

  for (const [codec, format, inWorker] of [
    ['PCMU/8000/1', 'ulaw', 1],
    ['opus/48000/2', 'opus', 0],
  ] as const) {
    test(`a call offering ${codec} to an endpoint allowing opus,ulaw runs ${inWorker ? 'in the worker' : 'on the main thread'}`, { timeout: 90_000 }, async () => {
      const pool = server.core.pjsip.mediaWorkers!;
      const { party, channelId } = await opusCall(codec);
      try {
        const agreed = (await (await server.ari(`/channels/${channelId}/variable?variable=FORMAT`)).json()) as { value: string };
        assert.equal(agreed.value, format);
        assert.equal(pool.streams, inWorker);
        await party.hangup();
        await nextEventOf('ChannelDestroyed', channelId);
      } finally {
        await party.stop();
      }
    });
  }
});
