import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openAudioFileWriter, readAudioFile } from '../../src/media/audio-file.ts';
import { getFileFormat, FILE_FORMAT_NAMES } from '../../src/media/codecs.ts';
import { RawAudioWriter } from '../../src/media/raw-audio-writer.ts';
import { sine } from './signals.ts';

let directory = '';
before(() => {
  directory = mkdtempSync(join(tmpdir(), 'patchbay-audio-'));
});
after(() => {
  rmSync(directory, { recursive: true, force: true });
});

describe('audio files by format', () => {
  it('writes and reads back every recording format', () => {
    for (const name of FILE_FORMAT_NAMES) {
      const format = getFileFormat(name)!;
      const rate = format.codec.rate;
      const samples = sine(1000, rate, rate / 10, 9000);
      const path = join(directory, `roundtrip.${format.extension}`);
      const writer = openAudioFileWriter(path, format);
      assert.equal(writer.rate, rate);
      for (let start = 0; start < samples.length; start += rate / 50) writer.write(samples.subarray(start, start + rate / 50));
      writer.finalize();
      const decoded = readAudioFile(path)!;
      assert.equal(decoded.rate, rate, name);
      assert.equal(decoded.samples.length, samples.length, name);
      const lossless = format.codec.bytesPerSample === 2;
      decoded.samples.forEach((sample, i) => {
        const tolerance = lossless ? 0 : Math.max(16, Math.abs(samples[i]) / 27);
        assert.ok(Math.abs(sample - samples[i]) <= tolerance, `${name} sample ${i}`);
      });
    }
  });

  it('raw files hold only encoded samples and append at the end', () => {
    const path = join(directory, 'append.sln');
    const codec = getFileFormat('sln')!.codec;
    const first = RawAudioWriter.open(path, { codec });
    first.write(Int16Array.from([1, 2, 3]));
    first.finalize();
    assert.equal(statSync(path).size, 6);
    // A torn trailing byte (crash mid-sample) is dropped before appending.
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from([0x7f])]));
    const second = RawAudioWriter.open(path, { codec, append: true });
    assert.equal(second.samplesWritten, 3);
    second.write(Int16Array.from([-4]));
    second.finalize();
    assert.deepEqual(Array.from(readAudioFile(path)!.samples), [1, 2, 3, -4]);
  });

  it('raw writer keeps unflushed samples in memory until flush', () => {
    const path = join(directory, 'flush.ulaw');
    const writer = RawAudioWriter.open(path, { codec: getFileFormat('ulaw')!.codec, flushIntervalMs: 1000 });
    writer.write(new Int16Array(160));
    assert.equal(statSync(path).size, 0);
    writer.flush();
    assert.equal(statSync(path).size, 160);
    assert.equal(writer.durationMs, 20);
    writer.finalize();
    assert.equal(writer.write(new Int16Array(1)), false);
  });

  it('answers undefined for an unknown extension', () => {
    assert.equal(readAudioFile(join(directory, 'x.mp3')), undefined);
  });
});
