import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CODEC_NAMES, FILE_FORMAT_NAMES, fileFormatForPath, getCodec, getFileFormat } from '../../src/media/codecs.ts';

describe('codec registry', () => {
  it('knows the Asterisk names with their rates and sizes', () => {
    assert.deepEqual(CODEC_NAMES, ['ulaw', 'alaw', 'slin', 'slin16', 'slin24', 'slin48']);
    const expected = {
      ulaw: [8000, 1, 160],
      alaw: [8000, 1, 160],
      slin: [8000, 2, 320],
      slin16: [16000, 2, 640],
    };
    for (const [name, [rate, bytesPerSample, bytesPerFrame]] of Object.entries(expected)) {
      const codec = getCodec(name);
      assert.ok(codec, name);
      assert.equal(codec.name, name);
      assert.equal(codec.rate, rate);
      assert.equal(codec.bytesPerSample, bytesPerSample);
      assert.equal(codec.bytesPerFrame, bytesPerFrame);
    }
  });

  it('answers undefined for unknown formats', () => {
    assert.equal(getCodec('gsm'), undefined);
    assert.equal(getCodec('ULAW'), undefined);
    assert.equal(getCodec(''), undefined);
  });

  it('round-trips through each codec', () => {
    const samples = Int16Array.from([0, 1, -1, 1000, -1000, 32767, -32768]);
    for (const name of CODEC_NAMES) {
      const codec = getCodec(name)!;
      const bytes = new Uint8Array(samples.length * codec.bytesPerSample);
      assert.equal(codec.encode(samples, bytes), bytes.length);
      const back = new Int16Array(samples.length);
      assert.equal(codec.decode(bytes, back), samples.length);
      if (codec.bytesPerSample === 2) assert.deepEqual(back, samples);
      else assert.ok(back.every((value, i) => Math.abs(value - samples[i]) <= Math.max(16, Math.abs(samples[i]) / 27)));
    }
  });

  it('stores slin little-endian', () => {
    const bytes = new Uint8Array(4);
    getCodec('slin')!.encode(Int16Array.from([0x1234, -2]), bytes);
    assert.deepEqual(Array.from(bytes), [0x34, 0x12, 0xfe, 0xff]);
  });
});

describe('file formats', () => {
  it('maps recording formats to containers and codecs', () => {
    assert.deepEqual(FILE_FORMAT_NAMES, ['wav', 'wav16', 'ulaw', 'alaw', 'sln', 'sln16', 'sln24', 'sln48']);
    const wav = getFileFormat('wav')!;
    assert.equal(wav.container, 'wav');
    assert.equal(wav.codec.name, 'slin');
    assert.equal(wav.extension, 'wav');
    assert.equal(getFileFormat('sln16')!.codec.rate, 16000);
    assert.equal(getFileFormat('sln')!.codec.name, 'slin');
    assert.equal(getFileFormat('ulaw')!.container, 'raw');
    assert.equal(getFileFormat('alaw')!.codec.name, 'alaw');
  });

  it('accepts Asterisk extension aliases and rejects the unknown', () => {
    assert.equal(getFileFormat('ul')!.name, 'ulaw');
    assert.equal(getFileFormat('.alw')!.name, 'alaw');
    assert.equal(getFileFormat('raw')!.name, 'sln');
    assert.equal(getFileFormat('WAV')!.name, 'wav');
    assert.equal(getFileFormat('mp3'), undefined);
    assert.equal(getFileFormat('gsm'), undefined);
  });

  it('derives the format from a path', () => {
    assert.equal(fileFormatForPath('/var/spool/rec/greeting.sln16')!.name, 'sln16');
    assert.equal(fileFormatForPath('sounds/hello-world.wav')!.name, 'wav');
    assert.equal(fileFormatForPath('/dir.wav/noextension'), undefined);
    assert.equal(fileFormatForPath('/dir/.hidden'), undefined);
  });
});
