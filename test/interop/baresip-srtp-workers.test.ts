// SDES-SRTP with the call's stream in a media worker (media.workers: 1, issue 25), against a real
// softphone: baresip 1.0 with its srtp module and `mediaenc=srtp-mand` calls an extension that records
// 3 s of it and then echoes it. baresip plays an 800 Hz tone: the recording must hold it (the worker
// checked and decrypted baresip's SRTP), and baresip's dump of what it heard must hold it too once
// Echo() sends it back (the worker encrypted it under our key, which baresip took from our answer).
// Meanwhile /metrics counts the stream on the worker, and no SRTP packet was refused. Last, the
// worker is killed: the SRTP call ends with cause 38 like a plain one. Skipped with a message when
// baresip, one of its modules, or sox is missing.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BARESIP_MODULES, HAVE_BARESIP, showBaresipOutput } from '../helpers/baresip.ts';
import { BaresipParty, HAVE_SOX, MISSING_PARTY_MODULES, toneFile } from '../helpers/baresip-party.ts';
import { parsePrometheus, sumOf } from '../helpers/prometheus.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { dominantTone } from '../helpers/rtp-tone.ts';
import { startTestServer } from '../helpers/server.ts';
import { nextEvent, waitFor } from './sipp-peer.ts';
import { waitForWorkers } from './sipp-worker-calls.ts';

const TONE_HZ = 800;
const missing = [...MISSING_PARTY_MODULES, ...(existsSync(join(BARESIP_MODULES, 'srtp.so')) ? [] : ['srtp.so'])];
const skip = !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : missing.length > 0 ? `baresip modules missing: ${missing.join(', ')}` : !HAVE_SOX ? 'sox is not installed' : false;
const AUTH = { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` };

test('baresip (mediaenc=srtp-mand) with its stream in a media worker: its tone is recorded and echoed back encrypted; a dying worker ends the call with cause 38', { timeout: 180_000, skip }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'patchbay-srtp-worker-'));
  const tone = join(work, 'tone.wav');
  toneFile(tone, 60, [{ hz: TONE_HZ, volume: 0.5 }]);
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Answer()\n same => n,Record(srtp-worker.wav,0,3)\n same => n,Echo()\n');
  const server = await startTestServer({
    media: { workers: 1 },
    dialplan: { file: dialplanFile },
    config_objects: { res_pjsip: { endpoint: { alice: { context: 'sip-in', allow: 'ulaw', media_encryption: 'sdes' } } } },
  } as never);
  const events = await server.events('app=watch&subscribeAll=true');
  const party = new BaresipParty({ user: 'alice', codec: 'PCMU/8000/1', source: `aufile,${tone}`, mediaenc: 'srtp-mand' }, join(work, 'alice'));
  const metrics = async () => parsePrometheus(await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text());
  try {
    const pool = server.core.pjsip.mediaWorkers;
    assert.ok(pool, 'the server runs a media worker');
    // A call placed before the worker has loaded runs on the main thread: this one must be in the worker.
    await waitForWorkers(server);
    await party.start(server.core.pjsip.port);
    await party.dial(`sip:100@127.0.0.1:${server.core.pjsip.port}`);
    const created = await nextEvent(events, (e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/alice-'), 30_000);

    await waitFor('the SRTP stream counted on the worker', async () => (sumOf(await metrics(), 'patchbay_media_worker_streams') === 1 ? true : undefined), 20_000);
    const file = await waitFor('the recording', () => findFile(join(server.dataDir, 'recordings'), 'srtp-worker.wav'), 30_000);
    const recorded = dominantTone(wavSamples(file), TONE_HZ);
    assert.ok(recorded.loudSamples >= 8000, `at least 1 s of baresip's tone recorded (${recorded.loudSamples} samples)`);
    assert.ok(Math.abs(recorded.frequency - TONE_HZ) < 25, `the recorded tone is ${recorded.frequency.toFixed(1)} Hz`);
    assert.ok(recorded.amplitude > 1000, `${TONE_HZ} Hz amplitude ${recorded.amplitude.toFixed(0)} recorded`);

    // Echo() for a while, then the worker dies: the call must end with cause 38 (not baresip's hang-up).
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const figures = await metrics();
    assert.equal(sumOf(figures, 'patchbay_sip_srtp_refused_packets_total'), 0, 'every packet of baresip authenticated in the worker');
    await pool.kill(0);
    const destroyed = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === created.channel.id, 30_000);
    assert.equal(destroyed.cause, 38, 'network out of order, as a plain call whose worker died');

    // What baresip heard back (its dump is complete once our BYE ended its call) went through the worker's SRTP both ways.
    // libsndfile writes in blocks: the dump is read until it holds the echo (or the call's end flushed it).
    const heard = await waitFor('baresip\'s dump of what it heard to hold the echo', () => {
      try {
        const dump = party.heard();
        return dominantTone(dump.samples, TONE_HZ).loudSamples >= 8000 ? dump : undefined;
      } catch {
        return undefined;
      }
    }, 20_000).catch(() => party.heard());
    assert.equal(heard.rate, 8000);
    const echoed = dominantTone(heard.samples, TONE_HZ);
    assert.ok(echoed.loudSamples >= 8000, `at least 1 s of the tone heard back (${echoed.loudSamples} samples)`);
    assert.ok(Math.abs(echoed.frequency - TONE_HZ) < 25, `the echoed tone is ${echoed.frequency.toFixed(1)} Hz`);
    assert.ok(echoed.amplitude > 1000, `${TONE_HZ} Hz amplitude ${echoed.amplitude.toFixed(0)} heard back`);
    process.stdout.write(`# SRTP in a worker: ${TONE_HZ} Hz recorded at ${recorded.amplitude.toFixed(0)}, echoed back at ${echoed.amplitude.toFixed(0)}\n`);
  } catch (error) {
    showBaresipOutput(party.output);
    throw error;
  } finally {
    await party.stop();
    await events.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
