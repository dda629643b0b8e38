// A baresip softphone a test or bench starts for one call: its own home (config, one account), an
// audio source (a sine or a WAV file), and its sndfile dump of what it hears, read back as samples.
// Driven through ctrl_tcp (helpers/baresip.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { BARESIP_MODULES, ctrl, waitFor, writeBaresipHome } from './baresip.ts';
import { freePort, freeSipPhonePort } from './ports.ts';

/** The modules a party loads besides the shared home's (g711, ausine, ctrl_tcp). */
export const PARTY_MODULES = ['g722.so', 'opus.so', 'sndfile.so', 'aufile.so'];
export const MISSING_PARTY_MODULES = PARTY_MODULES.filter((module) => !existsSync(join(BARESIP_MODULES, module)));
export const HAVE_SOX = spawnSync('sox', ['--version'], { encoding: 'utf8' }).error === undefined;

export interface PartyPlan {
  /** The endpoint it calls as (and the From user). */
  readonly user: string;
  readonly codec: 'G722/16000/1' | 'opus/48000/2' | 'PCMU/8000/1';
  /** baresip's audio_source line value (ausine,<Hz> or aufile,<path>). */
  readonly source: string;
  /** The account's mediaenc (srtp-mand: SDES-SRTP only, with baresip's srtp module); none: plain RTP. */
  readonly mediaenc?: 'srtp-mand';
}

/** One baresip on one call: its home, process and the dump of what it hears. */
export class BaresipParty {
  #child: ChildProcess | undefined;
  #output = '';
  #ctrlPort = 0;
  readonly #dumps: string;

  constructor(
    readonly plan: PartyPlan,
    private readonly work: string,
  ) {
    this.#dumps = join(work, 'dumps');
  }

  get output(): string {
    return this.#output;
  }

  async start(sipPort: number): Promise<void> {
    mkdirSync(this.work);
    mkdirSync(this.#dumps);
    const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
    this.#ctrlPort = ctrlPort;
    const home = writeBaresipHome(this.work, { phone: phonePort, ctrl: ctrlPort }, [
      'module g722.so',
      'module opus.so',
      'module aufile.so',
      'module sndfile.so',
      `snd_path ${this.#dumps}`,
      'rtcp_mux no',
      'opus_bitrate 64000',
      ...(this.plan.mediaenc ? ['module srtp.so'] : []),
    ]);
    const config = join(home, 'config');
    writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, `audio_source ${this.plan.source}`));
    writeFileSync(join(home, 'accounts'), `<sip:${this.plan.user}@127.0.0.1:${sipPort};transport=udp>;audio_codecs=${this.plan.codec};regint=0${this.plan.mediaenc ? `;mediaenc=${this.plan.mediaenc}` : ''}\n`);
    const child = spawn('baresip', ['-f', home], { cwd: this.work, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    child.stdout.on('data', (chunk: Buffer) => (this.#output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (this.#output += chunk.toString()));
  }

  async dial(uri: string): Promise<void> {
    const dialed = await waitFor('ctrl_tcp', () => ctrl(this.#ctrlPort, 'dial', uri).catch(() => undefined));
    assert.equal(dialed.ok, true, JSON.stringify(dialed));
  }

  async hangup(): Promise<void> {
    await ctrl(this.#ctrlPort, 'hangup', '').catch(() => undefined);
  }

  /** What it heard: its decoder's output as sndfile dumped it. */
  heard(): { rate: number; samples: Int16Array } {
    const file = readdirSync(this.#dumps).find((name) => name.endsWith('-dec.wav'));
    assert.ok(file, `${this.plan.user} dumped what it heard\n${this.#output.slice(-2000)}`);
    const wav = readWavFile(join(this.#dumps, file));
    return { rate: wav.rate, samples: wav.samples };
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}

/** A WAV of `seconds` at 48 kHz stereo (baresip's ausrc format here) saying the given tones. */
export function toneFile(path: string, seconds: number, tones: ReadonlyArray<{ hz: number; volume: number }>): void {
  const parts = tones.map((tone, index) => {
    const part = `${path}.${index}.wav`;
    const made = spawnSync('sox', ['-n', '-r', '48000', '-c', '2', '-b', '16', part, 'synth', String(seconds), 'sine', String(tone.hz), 'vol', String(tone.volume)], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    return part;
  });
  const mixed = parts.length === 1 ? spawnSync('cp', [parts[0], path]) : spawnSync('sox', ['-m', ...parts, path], { encoding: 'utf8' });
  assert.equal(mixed.status, 0, String(mixed.stderr));
}

