// SDES-SRTP against a real softphone: baresip 1.0 with its srtp module and `mediaenc=srtp-mand`
// (RTP/SAVP with a=crypto) calls extension 100, which answers and records; baresip plays a 800 Hz
// tone from a WAV file (ausrc aufile). The recording must hold the tone (decrypted correctly) and a
// capture of the server's RTP ports (dumpcap on lo) must show no plain RTP of it: every packet
// carries an authentication tag and its payload read as PCMU holds no 800 Hz. Skipped with a
// message when baresip, sox or dumpcap are missing. Then the other way: Patchbay calls baresip
// (auto-answer) with its own RTP/SAVP offer, and baresip's tone is recorded from the answered call.
// Last, secure calls whole: baresip registers over TLS (digest) and calls with SDES-SRTP; the SIP
// trace of the TLS signalling shows RTP/SAVP and a=crypto with every key masked.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { ulawToLinear } from '../../src/media/g711.ts';
import { aliceAccount, aliceWithDigest, ctrl, HAVE_BARESIP, type Json, nextOfType, showBaresipOutput, spawnBaresip, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { dominantTone } from '../helpers/rtp-tone.ts';
import { startTestServer } from '../helpers/server.ts';
import { makeTestCa, NO_OPENSSL } from '../helpers/tls-certs.ts';

const HAVE_TOOLS = ['sox', 'dumpcap', 'tshark'].every((tool) => spawnSync(tool, ['--version'], { encoding: 'utf8' }).error === undefined);
const TONE_HZ = 800;

/** Captures UDP on lo between `from` and `to` (ports) into `file` until stopped. */
async function capture(file: string, from: number, to: number): Promise<{ stop(): Promise<void> }> {
  const child = spawn('dumpcap', ['-q', '-i', 'lo', '-f', `udp portrange ${from}-${to}`, '-w', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // dumpcap says where it captures once it does.
  await waitFor('dumpcap to start', async () => (errors.includes('Capturing on') ? true : child.exitCode !== null ? Promise.reject(new Error(errors)) : undefined), 20_000);
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    },
  };
}

/** The UDP payloads of a capture file. */
function capturedPayloads(file: string): Buffer[] {
  const fields = spawnSync('tshark', ['-r', file, '-T', 'fields', '-e', 'udp.payload'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(fields.status, 0, fields.stderr);
  return fields.stdout
    .split('\n')
    .map((line) => line.trim().replace(/:/g, ''))
    .filter((line) => line !== '')
    .map((line) => Buffer.from(line, 'hex'));
}

test(
  'baresip with mediaenc=srtp-mand calls a recording extension: the tone is recorded, nothing on the wire is plain RTP of it',
  { timeout: 120_000, skip: !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : !HAVE_TOOLS ? 'sox, dumpcap or tshark missing' : false },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-srtp-'));
    const tone = join(work, 'tone.wav');
    const made = spawnSync('sox', ['-n', '-r', '48000', '-c', '2', '-b', '16', tone, 'synth', '12', 'sine', String(TONE_HZ), 'vol', '0.5'], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Answer()\n same => n,Record(baresip-srtp.wav,0,3)\n same => n,Hangup()\n');
    // A small RTP port range of our own, so the capture sees exactly this call's media.
    const rtpStart = 20_000 + 2 * Math.floor(Math.random() * 10_000);
    const server = await startTestServer({
      sip: { rtp_port_start: rtpStart, rtp_port_end: rtpStart + 40 },
      dialplan: { file: dialplanFile },
      config_objects: { res_pjsip: { endpoint: { alice: { context: 'sip-in', allow: 'ulaw', media_encryption: 'sdes' } } } },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    const pcap = join(work, 'rtp.pcapng');
    const tap = await capture(pcap, rtpStart, rtpStart + 41);
    try {
      const sipPort = server.core.pjsip.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['module srtp.so', 'module aufile.so', 'rtcp_mux no']);
      const config = join(home, 'config');
      writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, `audio_source aufile,${tone}`));
      writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPort};transport=udp>;audio_codecs=PCMU;regint=0;mediaenc=srtp-mand\n`);

      baresip = spawnBaresip(home, work, (text) => (output += text));
      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true, JSON.stringify(dialed));

      const recordings = join(server.dataDir, 'recordings');
      const file = await waitFor('the recording', async () => findFile(recordings, 'baresip-srtp.wav'), 30_000);
      // Record() renames the file when it finishes; the call then hangs up.
      await waitFor('the call to end', async () => (((await (await server.ari('/channels')).json()) as unknown[]).length === 0 ? true : undefined), 20_000);
      const { frequency, amplitude, loudSamples } = dominantTone(wavSamples(file), TONE_HZ);
      assert.ok(loudSamples >= 8000, `at least 1 s of baresip's tone recorded (${loudSamples} samples)`);
      assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the recorded tone is ${frequency.toFixed(1)} Hz`);
      assert.ok(amplitude > 1000, `${TONE_HZ} Hz amplitude ${amplitude.toFixed(0)}`);
      assert.match(output, /srtp|SRTP|crypto/i, 'baresip used its srtp module');

      await tap.stop();
      const rtp = capturedPayloads(pcap).filter((payload) => payload.length >= 12 && payload[0] >> 6 === 2 && (payload[1] & 0x7f) === 0);
      assert.ok(rtp.length > 50, `${rtp.length} audio packets captured`);
      // 160 bytes of PCMU and a 32- or 80-bit tag: never a bare 172-byte RTP packet.
      assert.ok(rtp.every((payload) => payload.length === 176 || payload.length === 182), `packet sizes ${[...new Set(rtp.map((p) => p.length))].join(', ')}`);
      const heard = Int16Array.from(rtp.flatMap((payload) => [...payload.subarray(12, 172)].map(ulawToLinear)));
      const plainAmplitude = Math.sqrt(2 * goertzelPower(heard, TONE_HZ, 8000));
      assert.ok(plainAmplitude < amplitude / 10, `the captured payloads read as PCMU hold no ${TONE_HZ} Hz (${plainAmplitude.toFixed(0)} vs ${amplitude.toFixed(0)} recorded)`);
      process.stdout.write(`# baresip SRTP: ${rtp.length} packets captured, ${TONE_HZ} Hz amplitude ${plainAmplitude.toFixed(0)} on the wire, ${amplitude.toFixed(0)} recorded (${frequency.toFixed(1)} Hz)\n`);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await tap.stop().catch(() => undefined);
      await stopBaresip(baresip);
      await server.stop();
      if (existsSync(work)) rmSync(work, { recursive: true, force: true });
    }
  },
);

test(
  'Patchbay calls baresip (mediaenc=srtp-mand, auto-answer) with an RTP/SAVP offer: baresip takes it and its tone is recorded',
  { timeout: 120_000, skip: !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : !HAVE_TOOLS ? 'sox, dumpcap or tshark missing' : false },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-srtp-out-'));
    const tone = join(work, 'tone.wav');
    const made = spawnSync('sox', ['-n', '-r', '48000', '-c', '2', '-b', '16', tone, 'synth', '12', 'sine', String(TONE_HZ), 'vol', '0.5'], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
    const server = await startTestServer({
      config_objects: {
        res_pjsip: {
          endpoint: { bob: { context: 'default', allow: 'ulaw', aors: 'bob', media_encryption: 'sdes', srtp_tag_32: 'yes' } },
          aor: { bob: { contact: `sip:bob@127.0.0.1:${phonePort}` } },
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    const events = await server.events('app=srtp-out');
    try {
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, ['module srtp.so', 'module aufile.so', 'rtcp_mux no']);
      const config = join(home, 'config');
      writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, `audio_source aufile,${tone}`));
      writeFileSync(join(home, 'accounts'), `<sip:bob@127.0.0.1:${phonePort};transport=udp>;audio_codecs=PCMU;regint=0;answermode=auto;mediaenc=srtp-mand\n`);
      baresip = spawnBaresip(home, work, (text) => (output += text));
      await waitFor('baresip ctrl_tcp', () => ctrl(ctrlPort, 'reginfo', '').catch(() => undefined));

      const originated = await server.ari('/channels?endpoint=PJSIP/bob&app=srtp-out', { method: 'POST' });
      assert.equal(originated.status, 200, await originated.text());
      const start = await nextOfType(events, 'StasisStart');
      const channel = start.channel as Json;
      const record = await server.ari(`/channels/${channel.id}/record?name=baresip-srtp-out&format=wav&maxDurationSeconds=2`, { method: 'POST' });
      assert.equal(record.status, 201, await record.text());
      await nextOfType(events, 'RecordingFinished');
      const file = findFile(join(server.dataDir, 'recordings'), 'baresip-srtp-out.wav');
      assert.ok(file, 'the recording exists');
      const { frequency, amplitude } = dominantTone(wavSamples(file), TONE_HZ);
      assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the recorded tone is ${frequency.toFixed(1)} Hz`);
      assert.ok(amplitude > 1000, `${TONE_HZ} Hz amplitude ${amplitude.toFixed(0)}`);
      assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
      await nextOfType(events, 'ChannelDestroyed', channel.id);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await events.close();
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
);

test(
  'baresip registers over TLS and calls with SDES-SRTP: the tone is recorded, the TLS trace shows the keys masked',
  { timeout: 120_000, skip: !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : !HAVE_TOOLS ? 'sox, dumpcap or tshark missing' : NO_OPENSSL },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-tls-srtp-'));
    const ca = await makeTestCa();
    const serverCert = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
    const tone = join(work, 'tone.wav');
    const made = spawnSync('sox', ['-n', '-r', '48000', '-c', '2', '-b', '16', tone, 'synth', '12', 'sine', String(TONE_HZ), 'vol', '0.5'], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Answer()\n same => n,Record(baresip-tls-srtp.wav,0,3)\n same => n,Hangup()\n');
    const server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          transport: { 'transport-tls': { protocol: 'tls', bind: '127.0.0.1:0', cert_file: serverCert.cert, priv_key_file: serverCert.key, ca_list_file: ca.cert, method: 'sslv23' } },
          ...aliceWithDigest({}, { transport: 'transport-tls', media_encryption: 'sdes' }),
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    try {
      const listener = server.core.pjsip.listeners().find((entry) => entry.protocol === 'TLS');
      assert.ok(listener?.port, 'a TLS listener');
      const sipPort = listener.port;
      server.core.pjsip.sipTrace.enable('');
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, [`sip_cafile ${ca.cert}`, 'module srtp.so', 'module aufile.so', 'rtcp_mux no']);
      const config = join(home, 'config');
      writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, `audio_source aufile,${tone}`));
      writeFileSync(join(home, 'accounts'), aliceAccount(sipPort, 'tls', ';mediaenc=srtp-mand'));
      baresip = spawnBaresip(home, work, (text) => (output += text));
      await waitFor('PJSIP/alice registered over TLS', async () => {
        const found = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as Json;
        return found.state === 'online' ? found : undefined;
      }, 30_000);
      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true, JSON.stringify(dialed));
      const file = await waitFor('the recording', async () => findFile(join(server.dataDir, 'recordings'), 'baresip-tls-srtp.wav'), 30_000);
      await waitFor('the call to end', async () => (((await (await server.ari('/channels')).json()) as unknown[]).length === 0 ? true : undefined), 20_000);
      const { frequency, amplitude } = dominantTone(wavSamples(file), TONE_HZ);
      assert.ok(Math.abs(frequency - TONE_HZ) < 25, `the recorded tone is ${frequency.toFixed(1)} Hz`);
      assert.ok(amplitude > 1000, `${TONE_HZ} Hz amplitude ${amplitude.toFixed(0)}`);

      const traced = server.logLines.map((line) => String((JSON.parse(line) as Json).msg ?? '')).filter((text) => text.startsWith('SIP '));
      const invite = traced.find((text) => /^SIP received from TLS [^\n]*\nINVITE sip:100@/.test(text) && text.includes('RTP/SAVP'));
      assert.ok(invite, 'the INVITE came over TLS with an RTP/SAVP offer');
      assert.match(invite, /a=crypto:\d+ AES_CM_128_HMAC_SHA1_(80|32) inline:\[masked\]/);
      const answer = traced.find((text) => /^SIP sent to TLS [^\n]*\nSIP\/2\.0 200 OK/.test(text) && text.includes('a=crypto:'));
      assert.ok(answer, 'our 200 with a=crypto went over TLS');
      assert.match(answer, /m=audio \d+ RTP\/SAVP /);
      assert.ok(!server.logLines.some((line) => /inline:(?!\[masked\])[A-Za-z0-9+/]{20}/.test(line)), 'no key anywhere in the log');
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await server.stop();
      ca.remove();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
