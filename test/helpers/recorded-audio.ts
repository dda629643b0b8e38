// Reading what a test recorded: find a recording by file name below a directory, and the PCM16
// samples of a WAV file (any chunk order; a recording in another format fails the test).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { meanSquare } from '../../src/media/energy.ts';

/** The first file called `name` below `dir`, depth first; undefined when there is none (yet). */
export function findFile(dir: string, name: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findFile(path, name);
      if (found) return found;
    } else if (entry.name === name) return path;
  }
  return undefined;
}

/** The samples of a PCM16 mono WAV file. */
export function wavSamples(file: string): Int16Array {
  const bytes = readFileSync(file);
  let offset = 12;
  let format = 1;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') format = bytes.readUInt16LE(offset + 8);
    if (id === 'data') {
      const data = bytes.subarray(offset + 8, Math.min(bytes.length, offset + 8 + size));
      assert.equal(format, 1, 'recording is PCM16');
      const out = new Int16Array(data.length >> 1);
      for (let i = 0; i < out.length; i++) out[i] = data.readInt16LE(i * 2);
      return out;
    }
    offset += 8 + size + (size & 1);
  }
  return new Int16Array(0);
}

/**
 * The frequency of `samples` by zero crossings, counted in loud 10 ms blocks only: a gap the jitter
 * buffer filled with silence on a loaded machine does not pull the figure down.
 */
export function loudZeroCrossingFrequency(samples: Int16Array, rate: number): number {
  const block = rate / 100;
  const threshold = meanSquare(samples) / 10;
  let crossings = 0;
  let counted = 0;
  for (let start = 0; start + block <= samples.length; start += block) {
    if (meanSquare(samples, start, start + block) < threshold) continue;
    // From the block's first sample, so a crossing at a block boundary counts too.
    for (let i = Math.max(1, start); i < start + block; i++) if (samples[i - 1] < 0 !== samples[i] < 0) crossings++;
    counted += start === 0 ? block - 1 : block;
  }
  return counted === 0 ? 0 : (crossings / 2) * (rate / counted);
}
