// What an Opus frame costs on each thread the media could run it on (issue 25): µs of thread CPU
// per 20 ms encode and per decode at 48 kHz, mono and stereo, libopus's `voip` application as the
// calls use it, for @evan/opus's native addon and its WebAssembly build, on the main thread and in a
// worker_thread. It also checks what decides whether the native addon can live in the media workers:
//   - safety: three threads coding at once with the native addon, each its own encoder and decoder,
//     must produce the packets and audio a single thread does (the addon returns its output in one
//     buffer per process, so they do not: see docs/media.md);
//   - the end of a worker that loaded the native addon, with and without the main thread holding
//     it too (a child process per case, whose exit status tells a crash).
// Thread CPU is read from /proc/thread-self/schedstat (nanoseconds on the CPU), so a busy machine
// slows the run without inflating the figures much.
// The other libraries considered (@discordjs/opus, opusscript) are measured the same way where installed.
// Run: npx tsx bench/opus-threads.ts [--frames 3000] [--skip-exit-checks] [--candidates DIR]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const args = process.argv.slice(2);
const FRAMES = Number(args[args.indexOf('--frames') + 1]) > 0 && args.includes('--frames') ? Number(args[args.indexOf('--frames') + 1]) : 3000;
const packageJson = new URL('../package.json', import.meta.url).pathname;
/** Where the other Opus libraries are installed to compare (`npm install --no-save --prefix DIR opusscript @discordjs/opus`); the project's own node_modules by default. */
const candidatesFrom = args.includes('--candidates') ? `${args[args.indexOf('--candidates') + 1]}/package.json` : packageJson;

/**
 * The measuring kernel, run as is on the main thread and, as source text, in a worker: it loads
 * @evan/opus the way the server does (the environment decides native or WebAssembly), codes
 * `frames` frames of speech-like audio and returns µs of thread CPU per encode and per decode.
 */
function measure(packagePath: string, channels: number, frames: number, library = '@evan/opus'): { encodeUs: number; decodeUs: number; build: string; digest: string } {
  // Every thread that runs this sets globalThis.require first (a worker's eval'd script is CommonJS, the bench an ES module).
  const req = (globalThis as { require?: NodeJS.Require }).require!;
  const localRequire = (req('node:module') as typeof import('node:module')).createRequire(packagePath);
  const fs = req('node:fs') as typeof import('node:fs');
  const crypto = req('node:crypto') as typeof import('node:crypto');
  const cpuNs = (): number => Number(fs.readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  const perFrame = 960 * channels;
  const pcm = new Int16Array(perFrame * 50);
  let seed = 7;
  for (let i = 0; i < pcm.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const t = Math.floor(i / channels);
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * (310 + 40 * (i % channels)) * t) / 48000) + 3000 * Math.sin((2 * Math.PI * 2300 * t) / 48000) + ((seed >> 16) % 1500));
  }
  // The libraries' own calls, each with libopus's voip application (2048) as the calls use it.
  const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  let encoder: { encode(pcm: Int16Array): Uint8Array };
  let decoder: { decode(packet: Uint8Array): Uint8Array };
  if (library === '@discordjs/opus') {
    type Coder = { encode(pcm: Buffer): Buffer; decode(packet: Buffer): Buffer; applyEncoderCTL(ctl: number, value: number): void };
    const { OpusEncoder } = localRequire(library) as { OpusEncoder: new (rate: number, channels: number) => Coder };
    const encoding = new OpusEncoder(48000, channels);
    encoding.applyEncoderCTL(4000, 2048);
    const decoding = new OpusEncoder(48000, channels);
    encoder = { encode: (pcm) => encoding.encode(asBuffer(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength))) };
    decoder = { decode: (packet) => decoding.decode(asBuffer(packet)) };
  } else if (library === 'opusscript') {
    type Coder = { encode(pcm: Buffer, samples: number): Buffer; decode(packet: Buffer): Buffer };
    const OpusScript = localRequire(library) as new (rate: number, channels: number, application: number) => Coder;
    const encoding = new OpusScript(48000, channels, 2048);
    const decoding = new OpusScript(48000, channels, 2048);
    encoder = { encode: (pcm) => encoding.encode(asBuffer(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)), 960) };
    decoder = { decode: (packet) => decoding.decode(asBuffer(packet)) };
  } else {
    const opus = localRequire('@evan/opus') as typeof import('@evan/opus');
    encoder = new opus.Encoder({ channels: channels as 1 | 2, sample_rate: 48000, application: 'voip' });
    decoder = new opus.Decoder({ channels: channels as 1 | 2, sample_rate: 48000 });
  }
  const packets: Uint8Array[] = [];
  for (let f = 0; f < 50; f++) packets.push(encoder.encode(pcm.subarray(f * perFrame, (f + 1) * perFrame)));
  const digest = crypto.createHash('sha1');
  // Warm-up, then the measured runs.
  for (let f = 0; f < 200; f++) decoder.decode(encoder.encode(pcm.subarray((f % 50) * perFrame, ((f % 50) + 1) * perFrame)));
  let started = cpuNs();
  for (let f = 0; f < frames; f++) digest.update(encoder.encode(pcm.subarray((f % 50) * perFrame, ((f % 50) + 1) * perFrame)));
  const encodeNs = cpuNs() - started;
  started = cpuNs();
  for (let f = 0; f < frames; f++) digest.update(decoder.decode(packets[f % 50]));
  const decodeNs = cpuNs() - started;
  const build = library !== '@evan/opus' ? library : typeof process.env.OPUS_FORCE_WASM === 'string' ? 'wasm' : 'native';
  return { encodeUs: encodeNs / frames / 1000, decodeUs: decodeNs / frames / 1000, build, digest: digest.digest('hex').slice(0, 12) };
}

type Result = ReturnType<typeof measure>;

/** tsx compiles `measure` with esbuild's keep-names helper calls in it; its source text run elsewhere needs the helper. */
const KEEP_NAMES_SHIM = 'var __name = (target) => target;';

function workerSource(channels: number, frames: number, library: string, from: string): string {
  return `const { parentPort } = require('node:worker_threads');
globalThis.require = require;
${KEEP_NAMES_SHIM}
${measure.toString()}
parentPort.postMessage(measure(${JSON.stringify(from)}, ${channels}, ${frames}, ${JSON.stringify(library)}));`;
}

function inWorker(channels: number, frames: number, wasm: boolean, library = '@evan/opus', from = packageJson): Promise<Result> {
  const env = { ...process.env };
  if (wasm) env.OPUS_FORCE_WASM = '1';
  else delete env.OPUS_FORCE_WASM;
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerSource(channels, frames, library, from), { eval: true, env });
    worker.once('message', (result: Result) => {
      resolve(result);
      // The worker ends by itself: safe with the native addon only because this thread holds it too.
    });
    worker.once('error', reject);
  });
}

/** The main thread of a child process (WebAssembly on a main thread needs the variable before the package loads). */
function inChildMain(channels: number, frames: number, wasm: boolean): Result {
  const env = { ...process.env };
  if (wasm) env.OPUS_FORCE_WASM = '1';
  else delete env.OPUS_FORCE_WASM;
  const source = `globalThis.require = require;\n${KEEP_NAMES_SHIM}\n${measure.toString()}\nprocess.stdout.write(JSON.stringify(measure(${JSON.stringify(packageJson)}, ${channels}, ${frames})));`;
  const run = spawnSync(process.execPath, ['-e', source], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`child failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Result;
}

function row(label: string, result: Result): void {
  const total = result.encodeUs + result.decodeUs;
  console.log(`  ${label.padEnd(30)} ${result.encodeUs.toFixed(1).padStart(7)} ${result.decodeUs.toFixed(1).padStart(7)} ${total.toFixed(1).padStart(7)}   ${Math.floor(20_000 / total).toString().padStart(5)}`);
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`Node ${process.version}, load average ${load}, ${FRAMES} frames per figure`);
console.log('µs of thread CPU per 20 ms frame at 48 kHz, libopus voip (calls per core: one encode and one decode per 20 ms)');
console.log(`  ${'where'.padEnd(30)} ${'encode'.padStart(7)} ${'decode'.padStart(7)} ${'both'.padStart(7)}   calls/core`);
// This thread loads the native addon first: a worker that loaded it may then end without a crash.
const require = createRequire(import.meta.url);
require('@evan/opus');
(globalThis as { require?: NodeJS.Require }).require = require;
for (const channels of [1, 2]) {
  const name = channels === 1 ? 'mono' : 'stereo';
  row(`native, main thread, ${name}`, measure(packageJson, channels, FRAMES));
  row(`native, worker, ${name}`, await inWorker(channels, FRAMES, false));
  row(`wasm, main thread, ${name}`, inChildMain(channels, FRAMES, true));
  row(`wasm, worker, ${name}`, await inWorker(channels, FRAMES, true));
}

// Three threads coding at once, each with its own coders: with a thread-safe library each produces
// the same bytes as the same work done alone.
console.log('\nThree workers coding mono at once, each checked against the same work done alone:');
for (const wasm of [false, true]) {
  const alone = await inWorker(1, FRAMES, wasm);
  const together = await Promise.all([inWorker(1, FRAMES, wasm), inWorker(1, FRAMES, wasm), inWorker(1, FRAMES, wasm)]);
  const same = together.filter((result) => result.digest === alone.digest).length;
  console.log(`  ${wasm ? 'wasm  ' : 'native'}: ${same} of 3 identical to the lone run${same === 3 ? '' : ' — concurrent threads corrupt each other\'s output'}`);
}

// The other libraries, where installed: mono in a worker, and three workers at once against a lone one.
console.log('\nOther Opus libraries (mono, in a worker; three workers at once against a lone run):');
for (const library of ['@discordjs/opus', 'opusscript']) {
  try {
    createRequire(candidatesFrom).resolve(library);
  } catch {
    console.log(`  ${library.padEnd(16)} not installed (npm install --no-save --prefix DIR ${library}; then --candidates DIR)`);
    continue;
  }
  try {
    const alone = await inWorker(1, FRAMES, false, library, candidatesFrom);
    const together = await Promise.all([1, 2, 3].map(() => inWorker(1, FRAMES, false, library, candidatesFrom)));
    const same = together.filter((result) => result.digest === alone.digest).length;
    row(`${library}, worker, mono`, alone);
    console.log(`  ${''.padEnd(30)} ${same} of 3 concurrent workers identical to the lone run`);
  } catch (error) {
    console.log(`  ${library.padEnd(16)} could not run here: ${(error as Error).message.split('\n')[0]}`);
  }
}

if (!args.includes('--skip-exit-checks')) {
  // A worker that loaded the native addon ends (terminate(), an uncaught error, process.exit() in
  // it, or its script's end), in a process whose main thread has or has not loaded the addon.
  console.log('\nA worker that loaded the native addon ends; does the process survive? (exit status of a child process per case)');
  for (const mainLoads of [false, true]) {
    for (const how of ['terminate', 'throw', 'exit', 'natural']) {
      const source = `
const { Worker } = require('node:worker_threads');
const r = require('node:module').createRequire(${JSON.stringify(packageJson)});
if (${mainLoads}) r('@evan/opus');
const code = \`const r = require('node:module').createRequire(${JSON.stringify(packageJson)});
const { Encoder } = r('@evan/opus');
new Encoder({ channels: 1, sample_rate: 48000, application: 'voip' }).encode(new Int16Array(960));
require('node:worker_threads').parentPort.postMessage('loaded');
const how = '${how}';
if (how === 'throw') setTimeout(() => { throw new Error('boom'); }, 20);
else if (how === 'exit') setTimeout(() => process.exit(3), 20);
else if (how === 'terminate') setInterval(() => {}, 1000);\`;
(async () => {
  for (let round = 0; round < 3; round++) {
    const w = new Worker(code, { eval: true });
    w.on('error', () => {});
    const exited = new Promise((resolve) => w.once('exit', resolve));
    await new Promise((resolve) => w.once('message', resolve));
    if ('${how}' === 'terminate') await w.terminate();
    await exited;
  }
  setTimeout(() => process.stdout.write('alive'), 200);
})();`;
      const run = spawnSync(process.execPath, ['-e', source], { encoding: 'utf8', timeout: 30_000 });
      const outcome = run.stdout === 'alive' && run.status === 0 ? 'survives' : `dies (${run.signal ?? `status ${run.status}`})`;
      console.log(`  main thread ${mainLoads ? 'holds the addon' : 'never loads it  '}, worker ends by ${how.padEnd(9)}: process ${outcome}`);
    }
  }
}
process.exit(0);
