// Prompts Patchbay makes for itself at first start, so the embedded defaults work with no sound
// package installed: a beep, silences of 1 to 10 seconds, and the call-progress tones. They live
// in their own directory (`<data>/generated/sounds`), which the sounds index only falls back
// on: an installed prompt of the same name (Asterisk's beep.wav) is always the one used.
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseToneList } from '../media/tones.ts';
import { ToneGenerator } from '../media/tone-generator.ts';
import { WavWriter } from '../media/wav-writer.ts';

const RATE = 8000;

interface BuiltinSound {
  readonly id: string;
  /** A tone list in Asterisk's syntax; empty for silence. */
  readonly tones: string;
  readonly ms: number;
}

const BUILTIN_SOUNDS: readonly BuiltinSound[] = [
  { id: 'beep', tones: '1000/250', ms: 250 },
  ...Array.from({ length: 10 }, (_, i) => ({ id: `silence/${i + 1}`, tones: '', ms: (i + 1) * 1000 })),
  { id: 'tones/dial', tones: resolveToneText('dial'), ms: 5000 },
  { id: 'tones/ring', tones: resolveToneText('ring'), ms: 6000 },
  { id: 'tones/busy', tones: resolveToneText('busy'), ms: 4000 },
  { id: 'tones/congestion', tones: resolveToneText('congestion'), ms: 4000 },
];

function resolveToneText(name: 'dial' | 'ring' | 'busy' | 'congestion'): string {
  // The US tones, written out so the files do not depend on the zone table's shape.
  const us: Record<string, string> = {
    dial: '350+440',
    ring: '440+480/2000,0/4000',
    busy: '480+620/500,0/500',
    congestion: '480+620/250,0/250',
  };
  return us[name];
}

/** Where the generated prompts are kept, under the data directory. */
export function generatedSoundsDir(dataDir: string): string {
  return join(dataDir, 'generated', 'sounds');
}

/**
 * Writes any missing built-in prompt under `<soundsDir>/en/`; returns how many were written.
 * With `legacyDir` (the first sound directory, where earlier versions wrote them), copies left
 * there that are byte for byte what was generated are removed, so they stop hiding installed
 * prompts of the same name; a file that differs in any byte is someone's own and stays.
 */
export function ensureBuiltinSounds(soundsDir: string, legacyDir?: string): number {
  let written = 0;
  for (const sound of BUILTIN_SOUNDS) {
    const file = join(soundsDir, 'en', `${sound.id}.wav`);
    if (!existsSync(file)) {
      writeBuiltin(sound, file);
      written++;
    }
    if (legacyDir !== undefined) removeLegacyCopy(join(legacyDir, 'en', `${sound.id}.wav`), file);
  }
  return written;
}

function writeBuiltin(sound: BuiltinSound, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  const writer = WavWriter.open(partial, { rate: RATE });
  const frame = new Int16Array(RATE / 50);
  const tones = sound.tones ? parseToneList(sound.tones) : undefined;
  const generator = tones ? new ToneGenerator(tones, { rate: RATE }) : undefined;
  for (let ms = 0; ms < sound.ms; ms += 20) {
    if (generator) generator.fill(frame);
    writer.write(frame);
  }
  writer.finalize();
  // Renamed into place only when complete, so a crash never leaves a truncated prompt.
  renameSync(partial, file);
}

function removeLegacyCopy(legacy: string, generated: string): void {
  try {
    if (legacy === generated || !lstatSync(legacy).isFile()) return;
    const ours = readFileSync(generated);
    if (lstatSync(legacy).size !== ours.length || !readFileSync(legacy).equals(ours)) return;
    unlinkSync(legacy);
  } catch {
    // Missing, unreadable or not removable: it stays as it is.
  }
}
