// G.722 and Opus against a real softphone, baresip 1.0 with its g722 and opus modules: it calls an
// Echo() extension playing a 6 kHz tone (ausine) and its sndfile module records what it hears. The
// echo went baresip → our decoder → the core's linear audio at 16 kHz → our encoder → baresip, so the
// 6 kHz tone coming back, and being most of what comes back, shows both our coders interoperate
// and the call stayed wideband end to end (G.711 could not carry anything above 4 kHz). Then the
// same phone's call is Dial()led to a G.711 phone (raw-phone.ts, PCMU only): its 1 kHz tone reaches
// that phone transcoded through the bridge. Skipped with a message when baresip or one of its
// modules is not installed.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { meanSquare } from '../../src/media/energy.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { BARESIP_MODULES, ctrl, HAVE_BARESIP, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { loudZeroCrossingFrequency } from '../helpers/recorded-audio.ts';
import { RawPhone } from './raw-phone.ts';

const TONE_HZ = 6000;
const MODULES = ['g722.so', 'opus.so', 'sndfile.so'];
const missing = MODULES.filter((module) => !existsSync(join(BARESIP_MODULES, module)));
const skip = !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : missing.length > 0 ? `baresip modules missing: ${missing.join(', ')}` : false;

type Codec = 'G722/16000/1' | 'opus/48000/2';

interface CallPlan {
  readonly codec: Codec;
  readonly allow: string;
  readonly toneHz: number;
  /** The extension baresip calls in [sip-in] and the dialplan lines of [sip-in]. */
  readonly extension: string;
  readonly dialplan: string;
  /** More res_pjsip objects (another endpoint for Dial()). */
  readonly resPjsip?: Record<string, Record<string, Record<string, string>>>;
  /** Told the server's SIP port before baresip calls. */
  readonly serverPort?: (port: number) => void;
  /** Sound directories of the server (the default ones otherwise). */
  readonly sounds?: string;
  /**
   * Resolves once the audio to listen to flows (default: as soon as baresip's channel exists). A
   * call Dial()led on must first ring and be answered, which on a loaded machine can take seconds.
   */
  readonly flowing?: () => Promise<void>;
}

interface CallResult {
  /** What baresip heard (its sndfile dump of the decoder's output). */
  readonly rate: number;
  readonly samples: Int16Array;
  /** CHANNEL(audionativeformat) of baresip's channel. */
  readonly nativeFormat: string;
  readonly output: string;
  /** When the 3 s of the call that were listened to started and ended (ms). */
  readonly from: number;
  readonly to: number;
}

async function wideCall(plan: CallPlan): Promise<CallResult> {
  const { codec, allow } = plan;
  const work = mkdtempSync(join(tmpdir(), `patchbay-baresip-${codec.split('/')[0].toLowerCase()}-`));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, `[sip-in]\n${plan.dialplan}`);
  const server: TestServer = await startTestServer({
    dialplan: { file: dialplanFile },
    ...(plan.sounds ? { dirs: { sounds: plan.sounds } } : {}),
    config_objects: { res_pjsip: { ...plan.resPjsip, endpoint: { ...plan.resPjsip?.endpoint, alice: { context: 'sip-in', allow } } } },
  });
  let baresip: ChildProcess | undefined;
  let output = '';
  try {
    const sipPort = server.core.pjsip.port;
    plan.serverPort?.(sipPort);
    const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
    const dumps = join(work, 'dumps');
    mkdirSync(dumps);
    const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, [
      'module g722.so',
      'module opus.so',
      'module sndfile.so',
      `snd_path ${dumps}`,
      'rtcp_mux no',
      'opus_bitrate 64000',
    ]);
    // The shared home plays 440 Hz; this call's tone is above what G.711 could carry.
    const config = join(home, 'config');
    writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, `audio_source ausine,${plan.toneHz}`));
    writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPort};transport=udp>;audio_codecs=${codec};regint=0\n`);
    const child = spawn('baresip', ['-f', home], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    baresip = child;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));

    const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:${plan.extension}@127.0.0.1:${sipPort}`).catch(() => undefined));
    assert.equal(dialed.ok, true, JSON.stringify(dialed));
    // Three seconds of echo once the call is up (the dump grows as baresip plays what it hears).
    const decodedDump = await waitFor('the dump of what baresip hears', async () => {
      const file = readdirSync(dumps).find((name) => name.endsWith('-dec.wav'));
      return file === undefined ? undefined : join(dumps, file);
    });
    const channel = await waitFor('baresip\'s channel', async () => {
      const list = (await (await server.ari('/channels')).json()) as Array<{ id: string; name: string }>;
      return list.find((entry) => entry.name.startsWith('PJSIP/alice-'));
    });
    await plan.flowing?.();
    const from = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const to = Date.now();
    const nativeFormat = (await (await server.ari(`/channels/${channel.id}/variable?variable=FORMAT`)).json()) as { value: string };
    await ctrl(ctrlPort, 'hangup', '').catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const wav = readWavFile(decodedDump);
    return { rate: wav.rate, samples: wav.samples, nativeFormat: nativeFormat.value, output, from, to };
  } catch (error) {
    throw new Error(`${(error as Error).message}\nbaresip said:\n${output.slice(-3000)}`);
  } finally {
    await stopBaresip(baresip);
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

describe('baresip wideband calls to Echo()', { skip }, () => {
  for (const [codec, allow, format] of [
    ['G722/16000/1', 'g722,ulaw', 'g722'],
    ['opus/48000/2', 'opus,ulaw', 'opus'],
  ] as const) {
    test(`${codec}: baresip's 6 kHz tone comes back through our decoder and encoder, energy above 4 kHz kept`, { timeout: 90_000 }, async () => {
      const heard = await wideCall({
        codec,
        allow,
        toneHz: TONE_HZ,
        extension: '600',
        dialplan: 'exten => 600,1,Answer()\n same => n,Set(FORMAT=${CHANNEL(audionativeformat)})\n same => n,Echo()\n',
      });
      assert.equal(heard.nativeFormat, format, `the channel runs the wideband codec; baresip said:\n${heard.output.slice(-3000)}`);
      assert.ok(heard.rate >= 16000, `baresip decodes at ${heard.rate} Hz`);
      // The last two seconds: the echo has long settled.
      const tail = heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate));
      assert.ok(tail.length >= heard.rate, `${tail.length} samples heard`);
      const total = meanSquare(tail);
      assert.ok(total > 1e5, `something came back (mean square ${total.toFixed(0)})`);
      const share = goertzelPower(tail, TONE_HZ, heard.rate) / total;
      assert.ok(share > 0.5, `6 kHz is ${(share * 100).toFixed(0)} % of what baresip hears`);
      const frequency = loudZeroCrossingFrequency(tail, heard.rate);
      assert.ok(Math.abs(frequency - TONE_HZ) < 150, `the echo's tone is at ${frequency.toFixed(0)} Hz`);
      process.stdout.write(`${codec}: 6 kHz is ${(share * 100).toFixed(1)} % of the echo, zero crossings at ${frequency.toFixed(0)} Hz\n`);
    });
  }

  for (const codec of ['G722/16000/1', 'opus/48000/2'] as const) {
    test(`${codec} to a G.711 phone: baresip's 1 kHz tone reaches it transcoded through the bridge`, { timeout: 90_000 }, async () => {
      const bob = new RawPhone('bob');
      await bob.open();
      try {
        const heard = await wideCall({
          codec,
          allow: codec.startsWith('G722') ? 'g722' : 'opus',
          toneHz: 1000,
          extension: '700',
          dialplan: 'exten => 700,1,Set(FORMAT=${CHANNEL(audionativeformat)})\n same => n,Dial(PJSIP/bob)\n',
          resPjsip: {
            endpoint: { bob: { context: 'sip-in', allow: 'ulaw', aors: 'bob' } },
            aor: { bob: { contact: `sip:bob@127.0.0.1:${bob.sipPort}` } },
          },
          serverPort: (port) => (bob.serverPort = port),
          // The three seconds listened to start once the bridge carries audio to the G.711 phone.
          flowing: async () => void (await waitFor('PCMU at the G.711 phone', async () => (bob.received.some((packet) => packet.payloadType === 0) ? true : undefined))),
        });
        assert.equal(heard.nativeFormat, codec.startsWith('G722') ? 'g722' : 'opus');
        const audio = bob.audioBetween(heard.from + 1000, heard.to);
        assert.ok(audio.length >= 8000, `${audio.length} samples of PCMU reached the G.711 phone`);
        const share = goertzelPower(audio, 1000, 8000) / Math.max(1, meanSquare(audio));
        assert.ok(share > 0.8, `1 kHz is ${(share * 100).toFixed(0)} % of what the G.711 phone hears`);
        const frequency = loudZeroCrossingFrequency(audio, 8000);
        assert.ok(Math.abs(frequency - 1000) < 50, `the tone arrives at ${frequency.toFixed(0)} Hz`);
      } finally {
        bob.close();
      }
    });
  }

  test('G722/16000/1: a 16 kHz prompt played to the call reaches baresip with its 6 kHz (no pass through 8 kHz)', { timeout: 90_000 }, async () => {
    const sounds = mkdtempSync(join(tmpdir(), 'patchbay-wide-sounds-'));
    try {
      // 8 s of 6 kHz as sln16, and the same name as ulaw (which could carry nothing above 4 kHz):
      // the G.722 channel is played the 16 kHz file, as Asterisk picks the format of its rate.
      mkdirSync(join(sounds, 'en'));
      const rate = 16000;
      const tone = Buffer.alloc(rate * 8 * 2);
      for (let i = 0; i < rate * 8; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / rate)), i * 2);
      writeFileSync(join(sounds, 'en', 'wide-tone.sln16'), tone);
      writeFileSync(join(sounds, 'en', 'wide-tone.ulaw'), Buffer.alloc(8000 * 8, 0xff));
      const heard = await wideCall({
        codec: 'G722/16000/1',
        allow: 'g722,ulaw',
        toneHz: 440,
        extension: '800',
        dialplan: 'exten => 800,1,Answer()\n same => n,Set(FORMAT=${CHANNEL(audionativeformat)})\n same => n,Playback(wide-tone)\n same => n,Hangup()\n',
        sounds,
      });
      assert.equal(heard.nativeFormat, 'g722');
      const tail = heard.samples.subarray(Math.max(0, heard.samples.length - 2 * heard.rate));
      const total = meanSquare(tail);
      assert.ok(total > 1e5, `the prompt was heard (mean square ${total.toFixed(0)})`);
      const share = goertzelPower(tail, TONE_HZ, heard.rate) / total;
      assert.ok(share > 0.5, `6 kHz is ${(share * 100).toFixed(0)} % of what baresip hears`);
      process.stdout.write(`G.722 playback: 6 kHz is ${(share * 100).toFixed(1)} % of what baresip hears\n`);
    } finally {
      rmSync(sounds, { recursive: true, force: true });
    }
  });
});
