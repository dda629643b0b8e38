// SIP call media against a real softphone, baresip 1.0 (Debian package baresip): it calls 100 (no
// registration: the endpoint is identified by user name), the app answers and plays a tone, and
// both sides exchange RTCP: baresip's reports about our stream reach rtp_statistics (round-trip
// time, its jitter and loss figures) while its 440 Hz audio goes through the jitter buffer into a
// recording. Skipped with a message when baresip is not installed.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestServer, type EventSocket } from '../helpers/server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { loudZeroCrossingFrequency } from '../helpers/recorded-audio.ts';
import { mediaExperienceScore } from '../../src/media/rtp/media-experience.ts';

import { ctrl, HAVE_BARESIP, type Json, nextOfType, showBaresipOutput, spawnBaresip, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';

test(
  'baresip: RTCP both ways (round-trip time and the far end\'s view in rtp_statistics), its audio through the jitter buffer',
  { timeout: 90_000, skip: HAVE_BARESIP ? false : 'baresip is not installed (Debian package baresip)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-media-'));
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Stasis(baresip-media)\n');
    const server = await startTestServer({
      sip: { rtcp_interval_ms: 1000 },
      dialplan: { file: dialplanFile },
      config_objects: { res_pjsip: { endpoint: { alice: { context: 'sip-in', allow: 'ulaw' } } } },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    let events: EventSocket | undefined;
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['rtcp_mux no']);
      writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPort};transport=udp>;audio_codecs=PCMU;regint=0\n`);

      events = await server.events('app=baresip-media');
      baresip = spawnBaresip(home, work, (text) => (output += text));

      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true, JSON.stringify(dialed));
      const start = await nextOfType(events, 'StasisStart');
      const channel = start.channel as Json;
      assert.equal((await server.ari(`/channels/${channel.id}/answer`, { method: 'POST' })).status, 204);
      assert.equal((await server.ari(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:1000')}`, { method: 'POST' })).status, 201);

      // baresip's 440 Hz, through the jitter buffer, recorded for 2 s.
      const record = await server.ari(`/channels/${channel.id}/record?name=baresip-media&format=wav&maxDurationSeconds=2`, { method: 'POST' });
      assert.equal(record.status, 201, await record.text());
      await nextOfType(events, 'RecordingFinished');
      const wav = Buffer.from(await (await server.ari('/recordings/stored/baresip-media/file')).arrayBuffer());
      const data = wav.indexOf('data');
      assert.ok(data > 0, 'a WAV file');
      const samples = new Int16Array((wav.length - data - 8) >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(data + 8 + i * 2);
      // Past the first 200 ms, counted in loud blocks only: a late packet on a loaded machine leaves
      // a gap of silence that is not the tone's fault.
      const loud = samples.subarray(1600);
      assert.ok(loud.length >= 8000, `${loud.length} samples recorded`);
      const frequency = loudZeroCrossingFrequency(loud, 8000);
      assert.ok(Math.abs(frequency - 440) < 15, `baresip's tone recorded at ${frequency.toFixed(1)} Hz`);

      // baresip reports every few seconds; its report about our stream carries our LSR back.
      const statistics = await waitFor(
        'a round-trip time from baresip\'s RTCP',
        async () => {
          const body = (await (await server.ari(`/channels/${channel.id}/rtp_statistics`)).json()) as Json;
          return body.rtt > 0 ? body : undefined;
        },
        30_000,
      );
      assert.ok(statistics.rtt < 0.2, `rtt ${statistics.rtt} s on loopback`);
      assert.ok(statistics.rxcount > 50, `${statistics.rxcount} packets from baresip`);
      assert.ok(statistics.txcount > 50, `${statistics.txcount} packets to baresip`);
      assert.equal(statistics.txploss, 0, 'baresip lost nothing of ours');
      assert.ok(statistics.txjitter < 0.05, `jitter baresip sees ${statistics.txjitter}`);
      assert.ok(statistics.rxjitter < 0.05, `jitter we see ${statistics.rxjitter}`);
      assert.ok(statistics.remote_ssrc !== 0 && statistics.local_ssrc !== 0);
      // The media experience score of our stream from baresip's reports, as Asterisk figures it from
      // the same figures (all of them changed only by its reports), and ours of its stream.
      const remoteMes = mediaExperienceScore(statistics.normdevrtt, statistics.txjitter, statistics.remote_stdevjitter, statistics.remote_normdevrxploss);
      assert.equal(statistics.rxmes, Math.trunc(remoteMes), `rxmes ${statistics.rxmes}, the formula ${remoteMes}`);
      assert.ok(statistics.rxmes >= 80 && statistics.rxmes <= 88, `a loopback call without loss scores high: rxmes ${statistics.rxmes}`);
      assert.ok(statistics.remote_minmes > 0 && statistics.remote_minmes <= statistics.remote_maxmes);
      assert.ok(statistics.txmes > 50 && statistics.txmes <= 88 && statistics.local_maxmes > 0, `txmes ${statistics.txmes}, local_maxmes ${statistics.local_maxmes}`);
      process.stdout.write(`# baresip rtp_statistics: ${JSON.stringify(statistics)}\n`);

      assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
      await nextOfType(events, 'ChannelDestroyed', channel.id);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await events?.close();
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
