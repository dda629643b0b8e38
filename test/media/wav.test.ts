import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WavWriter } from '../../src/media/wav-writer.ts';
import { decodeWav, readWavFile } from '../../src/media/wav-reader.ts';
import { WavFormatError } from '../../src/media/wav.ts';
import { linearToAlaw, linearToUlaw } from '../../src/media/g711.ts';
import { sine } from './signals.ts';

let directory = '';
before(() => {
  directory = mkdtempSync(join(tmpdir(), 'patchbay-wav-'));
});
after(() => {
  rmSync(directory, { recursive: true, force: true });
});

function expectCanonicalHeader(file: Buffer, rate: number, dataBytes: number): void {
  assert.equal(file.length, 44 + dataBytes);
  assert.equal(file.toString('latin1', 0, 4), 'RIFF');
  assert.equal(file.readUInt32LE(4), 36 + dataBytes);
  assert.equal(file.toString('latin1', 8, 12), 'WAVE');
  assert.equal(file.toString('latin1', 12, 16), 'fmt ');
  assert.equal(file.readUInt32LE(16), 16);
  assert.equal(file.readUInt16LE(20), 1, 'PCM');
  assert.equal(file.readUInt16LE(22), 1, 'mono');
  assert.equal(file.readUInt32LE(24), rate);
  assert.equal(file.readUInt32LE(28), rate * 2, 'byte rate');
  assert.equal(file.readUInt16LE(32), 2, 'block align');
  assert.equal(file.readUInt16LE(34), 16, 'bits');
  assert.equal(file.toString('latin1', 36, 40), 'data');
  assert.equal(file.readUInt32LE(40), dataBytes);
}

interface ChunkSpec {
  id: string;
  body: Buffer;
}

function riff(chunks: ChunkSpec[], riffSize?: number): Buffer {
  const parts = chunks.map(({ id, body }) => {
    const header = Buffer.alloc(8);
    header.write(id, 0, 'latin1');
    header.writeUInt32LE(body.length, 4);
    return Buffer.concat([header, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
  });
  const content = Buffer.concat(parts);
  const preamble = Buffer.alloc(12);
  preamble.write('RIFF', 0, 'latin1');
  preamble.writeUInt32LE(riffSize ?? content.length + 4, 4);
  preamble.write('WAVE', 8, 'latin1');
  return Buffer.concat([preamble, content]);
}

function fmt(tag: number, channels: number, rate: number, bits: number): ChunkSpec {
  const body = Buffer.alloc(16);
  const blockAlign = (channels * bits) / 8;
  body.writeUInt16LE(tag, 0);
  body.writeUInt16LE(channels, 2);
  body.writeUInt32LE(rate, 4);
  body.writeUInt32LE(rate * blockAlign, 8);
  body.writeUInt16LE(blockAlign, 12);
  body.writeUInt16LE(bits, 14);
  return { id: 'fmt ', body };
}

function int16Bytes(samples: number[]): Buffer {
  const buffer = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, i) => buffer.writeInt16LE(sample, i * 2));
  return buffer;
}

describe('WavWriter', () => {
  it('writes an exact canonical header that the reader parses back', () => {
    const path = join(directory, 'exact.wav');
    const samples = sine(440, 8000, 1000, 12000);
    const writer = WavWriter.open(path, { rate: 8000 });
    for (let start = 0; start < samples.length; start += 160) writer.write(samples.subarray(start, start + 160));
    assert.equal(writer.samplesWritten, 1000);
    assert.equal(writer.durationMs, 125);
    writer.finalize();
    assert.equal(writer.closed, true);
    assert.equal(writer.write(samples), false);
    writer.finalize();

    const file = readFileSync(path);
    expectCanonicalHeader(file, 8000, 2000);
    const decoded = readWavFile(path);
    assert.equal(decoded.rate, 8000);
    assert.equal(decoded.sourceChannels, 1);
    assert.equal(decoded.sourceEncoding, 'pcm16');
    assert.deepEqual(decoded.samples, samples);
  });

  it('writes 16 kHz files', () => {
    const path = join(directory, 'wide.wav');
    const writer = WavWriter.open(path, { rate: 16000 });
    writer.write(sine(1000, 16000, 320, 8000));
    writer.finalize();
    expectCanonicalHeader(readFileSync(path), 16000, 640);
    assert.equal(readWavFile(path).rate, 16000);
  });

  it('an empty recording is still a valid file', () => {
    const path = join(directory, 'empty.wav');
    WavWriter.open(path, { rate: 8000 }).finalize();
    expectCanonicalHeader(readFileSync(path), 8000, 0);
    assert.equal(readWavFile(path).samples.length, 0);
  });

  it('is valid after flush without finalize, holding exactly the flushed samples', () => {
    const path = join(directory, 'crash.wav');
    const writer = WavWriter.open(path, { rate: 8000, flushIntervalMs: 10_000 });
    const first = sine(300, 8000, 480, 5000);
    writer.write(first);
    writer.flush();
    writer.write(sine(600, 8000, 160, 5000));
    // Simulated crash: the writer is abandoned here with 160 samples unflushed.
    const file = readFileSync(path);
    expectCanonicalHeader(file, 8000, 960);
    assert.deepEqual(readWavFile(path).samples, first);
    writer.finalize();
    expectCanonicalHeader(readFileSync(path), 8000, 1280);
  });

  it('flushes on its own once the interval is gathered', () => {
    const path = join(directory, 'auto.wav');
    const writer = WavWriter.open(path, { rate: 8000, flushIntervalMs: 100 });
    for (let frame = 0; frame < 6; frame++) writer.write(new Int16Array(160).fill(frame));
    // 100 ms = 800 samples = 5 frames flushed; the sixth is still in memory.
    expectCanonicalHeader(readFileSync(path), 8000, 1600);
    writer.finalize();
    expectCanonicalHeader(readFileSync(path), 8000, 1920);
  });

  it('appends to an existing recording', () => {
    const path = join(directory, 'append.wav');
    const first = sine(500, 8000, 800, 7000);
    const second = sine(700, 8000, 400, 7000);
    const writer = WavWriter.open(path, { rate: 8000 });
    writer.write(first);
    writer.finalize();
    const continued = WavWriter.open(path, { rate: 8000, append: true });
    assert.equal(continued.samplesWritten, 800);
    continued.write(second);
    continued.finalize();
    expectCanonicalHeader(readFileSync(path), 8000, 2400);
    const samples = readWavFile(path).samples;
    assert.deepEqual(samples.subarray(0, 800), first);
    assert.deepEqual(samples.subarray(800), second);
  });

  it('append creates a missing file', () => {
    const path = join(directory, 'append-new.wav');
    const writer = WavWriter.open(path, { rate: 16000, append: true });
    writer.write(new Int16Array(10).fill(3));
    writer.finalize();
    expectCanonicalHeader(readFileSync(path), 16000, 20);
  });

  it('append keeps samples a crashed writer wrote after its last header patch', () => {
    const path = join(directory, 'recover.wav');
    const writer = WavWriter.open(path, { rate: 8000 });
    writer.write(Int16Array.from([1, 2, 3]));
    writer.finalize();
    appendFileSync(path, int16Bytes([4, 5]));
    assert.deepEqual(Array.from(readWavFile(path).samples), [1, 2, 3]);
    const continued = WavWriter.open(path, { rate: 8000, append: true });
    continued.write(Int16Array.from([6]));
    continued.finalize();
    expectCanonicalHeader(readFileSync(path), 8000, 12);
    assert.deepEqual(Array.from(readWavFile(path).samples), [1, 2, 3, 4, 5, 6]);
  });

  it('append continues a foreign file with extra chunks', () => {
    const path = join(directory, 'foreign.wav');
    const list = { id: 'LIST', body: Buffer.from('INFOISFT\x05\x00\x00\x00test\x00', 'latin1') };
    writeFileSync(path, riff([fmt(1, 1, 8000, 16), list, { id: 'data', body: int16Bytes([7, 8]) }, list]));
    const writer = WavWriter.open(path, { rate: 8000, append: true });
    writer.write(Int16Array.from([9]));
    writer.finalize();
    const file = readFileSync(path);
    // The trailing LIST is dropped so the data can grow; sizes are patched in place.
    assert.equal(file.readUInt32LE(4), file.length - 8);
    assert.deepEqual(Array.from(readWavFile(path).samples), [7, 8, 9]);
  });

  it('refuses to append audio of another format', () => {
    const path = join(directory, 'mismatch.wav');
    WavWriter.open(path, { rate: 8000 }).finalize();
    assert.throws(() => WavWriter.open(path, { rate: 16000, append: true }), WavFormatError);
    const stereo = join(directory, 'stereo-append.wav');
    writeFileSync(stereo, riff([fmt(1, 2, 8000, 16), { id: 'data', body: int16Bytes([1, 2]) }]));
    assert.throws(() => WavWriter.open(stereo, { rate: 8000, append: true }), WavFormatError);
  });
});

describe('WAV reader', () => {
  it('skips unknown chunks, including odd-sized ones, and downmixes stereo', () => {
    const bytes = riff([
      { id: 'LIST', body: Buffer.from('odd', 'latin1') },
      fmt(1, 2, 22050, 16),
      { id: 'fact', body: Buffer.alloc(4) },
      { id: 'data', body: int16Bytes([100, 300, -100, -301, 32767, 32767]) },
    ]);
    const decoded = decodeWav(bytes);
    assert.equal(decoded.rate, 22050);
    assert.equal(decoded.sourceChannels, 2);
    assert.deepEqual(Array.from(decoded.samples), [200, -200, 32767]);
  });

  it('decodes μ-law and A-law WAV', () => {
    const samples = [0, 1000, -1000, 32000];
    const ulaw = decodeWav(riff([fmt(7, 1, 8000, 8), { id: 'data', body: Buffer.from(samples.map(linearToUlaw)) }]));
    assert.equal(ulaw.sourceEncoding, 'ulaw');
    assert.deepEqual(Array.from(ulaw.samples), [0, 988, -988, 32124]);
    const alaw = decodeWav(riff([fmt(6, 1, 8000, 8), { id: 'data', body: Buffer.from(samples.map(linearToAlaw)) }]));
    assert.equal(alaw.sourceEncoding, 'alaw');
    assert.deepEqual(Array.from(alaw.samples), [8, 1008, -1008, 32256]);
  });

  it('decodes 8-bit PCM and WAVE_FORMAT_EXTENSIBLE', () => {
    const eightBit = decodeWav(riff([fmt(1, 1, 11025, 8), { id: 'data', body: Buffer.from([128, 255, 0]) }]));
    assert.deepEqual(Array.from(eightBit.samples), [0, 127 << 8, -32768]);
    const extensible = fmt(0xfffe, 1, 16000, 16);
    const extension = Buffer.alloc(24);
    extension.writeUInt16LE(22, 0);
    extension.writeUInt16LE(16, 2);
    extension.writeUInt16LE(1, 8); // sub-format: PCM
    extensible.body = Buffer.concat([extensible.body, extension]);
    const decoded = decodeWav(riff([extensible, { id: 'data', body: int16Bytes([5, -5]) }]));
    assert.equal(decoded.rate, 16000);
    assert.deepEqual(Array.from(decoded.samples), [5, -5]);
  });

  it('clips a streaming size (0xFFFFFFFF) to the file', () => {
    const bytes = riff([fmt(1, 1, 8000, 16), { id: 'data', body: int16Bytes([1, 2, 3]) }], 0xffffffff);
    bytes.writeUInt32LE(0xffffffff, 40);
    assert.deepEqual(Array.from(decodeWav(bytes).samples), [1, 2, 3]);
  });

  it('rejects what it cannot read', () => {
    assert.throws(() => decodeWav(Buffer.from('not a wave file at all, really')), WavFormatError);
    assert.throws(() => decodeWav(riff([{ id: 'data', body: int16Bytes([1]) }])), WavFormatError);
    assert.throws(() => decodeWav(riff([fmt(1, 1, 8000, 16)])), WavFormatError);
    assert.throws(() => decodeWav(riff([fmt(49, 1, 8000, 0), { id: 'data', body: Buffer.alloc(65) }])), WavFormatError);
  });
});
