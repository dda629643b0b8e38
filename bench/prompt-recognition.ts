// Prompt recognition of virtual callers (src/testing/audio-match.ts), measured: every Asterisk
// core prompt (/usr/share/asterisk/sounds/en/*.wav) coded through µ-law, A-law and G.722 and
// played at −6, 0 and +6 dB must be recognised (recall), and no other prompt may be taken for it
// (precision: every other prompt is a distractor, heard through the same codings).
//
// Run: npx tsx bench/prompt-recognition.ts [--targets n] [--distractors n] [--threshold t]
//   --targets n      the first n prompts (sorted by name) are looked for (default: all)
//   --distractors n  each target is scored against n other prompts, spread over the set
//                    (default: all others). Each distractor is heard through one of the 9 codings
//                    (codec × level), fixed per distractor and spread evenly over the set.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { samplesPerFrame } from '../src/media/frame.ts';
import { createResampler } from '../src/media/resample.ts';
import { createCoder, maxFrameBytes } from '../src/media/stream-coder.ts';
import { readWavFile } from '../src/media/wav-reader.ts';
import { DEFAULT_PROMPT_THRESHOLD, PromptReference } from '../src/testing/audio-match.ts';

const SOUNDS = '/usr/share/asterisk/sounds/en';
const CODECS = ['ulaw', 'alaw', 'g722'] as const;
const GAINS_DB = [-6, 0, 6];
/** Silence around what is heard, as a caller hears a prompt between others. */
const PAD = 2400;

const { values } = parseArgs({ options: { targets: { type: 'string' }, distractors: { type: 'string' }, threshold: { type: 'string' } } });
const threshold = values.threshold ? Number(values.threshold) : DEFAULT_PROMPT_THRESHOLD;

interface Prompt {
  readonly name: string;
  readonly samples: Int16Array;
  readonly reference: PromptReference;
}

const prompts: Prompt[] = [];
for (const file of readdirSync(SOUNDS).filter((f) => f.endsWith('.wav')).sort()) {
  const wav = readWavFile(join(SOUNDS, file));
  if (wav.rate !== 8000) continue;
  try {
    prompts.push({ name: file.slice(0, -4), samples: wav.samples, reference: new PromptReference(file, Float32Array.from(wav.samples)) });
  } catch {
    // a silent file cannot be a prompt
  }
}

/** The prompt as a caller would hear it: through `codec`, `gainDb` louder, between silences. */
function heardThrough(samples: Int16Array, codec: (typeof CODECS)[number], gainDb: number): Float32Array {
  const gain = 10 ** (gainDb / 20);
  const coder = createCoder(codec)!;
  const rate = coder.rate;
  const frame = samplesPerFrame(rate);
  let linear = Int16Array.from(samples, (s) => Math.max(-32768, Math.min(32767, Math.round(s * gain))));
  if (rate === 16000) {
    const up = createResampler(8000, 16000);
    const out = new Int16Array(up.outputLength(linear.length));
    up.process(linear, out);
    linear = out;
  }
  const decoded = new Int16Array(Math.ceil(linear.length / frame) * frame);
  const payload = new Uint8Array(maxFrameBytes(coder));
  const block = new Int16Array(frame);
  const out = new Int16Array(coder.decoder.maxSamples(payload.length));
  for (let at = 0; at < linear.length; at += frame) {
    block.fill(0);
    block.set(linear.subarray(at, Math.min(at + frame, linear.length)));
    const bytes = coder.encoder.encode(block, frame, payload, 0);
    const n = coder.decoder.decode(payload, 0, bytes, out);
    decoded.set(out.subarray(0, n), at);
  }
  let at8k = decoded;
  if (rate === 16000) {
    const down = createResampler(16000, 8000);
    at8k = new Int16Array(down.outputLength(decoded.length));
    down.process(decoded, at8k);
  }
  const heard = new Float32Array(at8k.length + 2 * PAD);
  heard.set(at8k, PAD);
  return heard;
}

const targets = prompts.slice(0, values.targets ? Number(values.targets) : prompts.length);
const distractorCount = Math.min(prompts.length - 1, values.distractors ? Number(values.distractors) : prompts.length - 1);
const started = Date.now();
let truePositives = 0;
let falseNegatives = 0;
let falsePositives = 0;
let trueNegatives = 0;
let minPositive = { score: Infinity, what: '' };
let maxNegative = { score: -Infinity, what: '' };
const falsePositivePairs: string[] = [];
const missed: string[] = [];
/** Each prompt as a distractor: coded once, through the coding its index gives. */
const distractorAudio = new Map<Prompt, { heard: Float32Array; coding: string }>();
function asDistractor(prompt: Prompt): { heard: Float32Array; coding: string } {
  let entry = distractorAudio.get(prompt);
  if (!entry) {
    const index = prompts.indexOf(prompt);
    const codec = CODECS[index % 3]!;
    const gainDb = GAINS_DB[Math.floor(index / 3) % 3]!;
    entry = { heard: heardThrough(prompt.samples, codec, gainDb), coding: `${codec} ${gainDb} dB` };
    distractorAudio.set(prompt, entry);
  }
  return entry;
}

/** `heard` with silence after it up to `length` (a prompt longer than it is looked for in it too). */
function atLeast(heard: Float32Array, length: number): Float32Array {
  if (heard.length >= length + 2 * PAD) return heard;
  const longer = new Float32Array(length + 2 * PAD);
  longer.set(heard);
  return longer;
}

for (const [index, target] of targets.entries()) {
  for (const codec of CODECS) {
    for (const gainDb of GAINS_DB) {
      const { score } = target.reference.bestMatch(heardThrough(target.samples, codec, gainDb));
      if (score >= threshold) truePositives++;
      else {
        falseNegatives++;
        missed.push(`${target.name} ${codec} ${gainDb} dB: ${score.toFixed(3)}`);
      }
      if (score < minPositive.score) minPositive = { score, what: `${target.name} ${codec} ${gainDb} dB` };
    }
  }
  const others = prompts.filter((p) => p !== target);
  const step = others.length / distractorCount;
  for (let k = 0; k < distractorCount; k++) {
    const distractor = others[Math.floor(k * step)]!;
    const { heard, coding } = asDistractor(distractor);
    const { score } = target.reference.bestMatch(atLeast(heard, target.reference.samples.length));
    if (score >= threshold) {
      falsePositives++;
      falsePositivePairs.push(`${target.name} in ${distractor.name} (${coding}): ${score.toFixed(3)}`);
    } else trueNegatives++;
    if (score > maxNegative.score) maxNegative = { score, what: `${target.name} in ${distractor.name} (${coding})` };
  }
  if ((index + 1) % 25 === 0) process.stderr.write(`  ${index + 1}/${targets.length} targets, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const precision = truePositives / Math.max(1, truePositives + falsePositives);
const recall = truePositives / Math.max(1, truePositives + falseNegatives);
console.log(`prompt recognition, threshold ${threshold}: ${prompts.length} prompts in ${SOUNDS}, ${targets.length} looked for`);
console.log(`  positives: ${targets.length} prompts × ${CODECS.join('/')} × ${GAINS_DB.join('/')} dB = ${truePositives + falseNegatives} (each must be found)`);
console.log(`  negatives: ${targets.length} × ${distractorCount} distractors = ${trueNegatives + falsePositives} (each distractor through one of the 9 codings)`);
console.log(`  recall    ${(recall * 100).toFixed(2)} %  (${truePositives} found, ${falseNegatives} missed; lowest score ${minPositive.score.toFixed(3)}: ${minPositive.what})`);
console.log(`  precision ${(precision * 100).toFixed(2)} %  (${falsePositives} false detections; highest distractor score ${maxNegative.score.toFixed(3)}: ${maxNegative.what})`);
console.log(`  ${((Date.now() - started) / 1000).toFixed(1)} s`);
for (const line of missed.slice(0, 20)) console.log(`  missed: ${line}`);
for (const line of falsePositivePairs.slice(0, 40)) console.log(`  false detection: ${line}`);
