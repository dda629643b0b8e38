import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getCodec } from '../../src/media/codecs.ts';
import { meanSquare } from '../../src/media/energy.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { createCoder, maxFrameBytes, OPUS_LINEAR_RATE, STREAM_CODEC_NAMES } from '../../src/media/stream-coder.ts';
import { createResampler } from '../../src/media/resample.ts';
import { sine, toDb } from './signals.ts';

test('createCoder gives every codec of the engine an encoder/decoder pair; unknown and uncoded names none', () => {
  for (const name of STREAM_CODEC_NAMES) {
    const coder = createCoder(name);
    assert.ok(coder, name);
    assert.equal(coder.info.name, name);
    assert.equal(coder.encoder.rate, coder.rate);
    assert.equal(coder.decoder.rate, coder.rate);
  }
  assert.equal(createCoder('g729'), undefined, 'known to the table, not coded here');
  assert.equal(createCoder('klingon'), undefined);
  assert.equal(createCoder('opus')!.info.clockRate, 48000, 'RFC 7587: Opus counts 48000 whatever the audio rate');
});

test('sample coders wrap the stateless table: the same bytes as getCodec(), at offsets', () => {
  const input = sine(440, 8000, 160, 12000);
  for (const name of ['ulaw', 'alaw', 'slin'] as const) {
    const coder = createCoder(name)!;
    const viaTable = new Uint8Array(320);
    const tableBytes = getCodec(name)!.encode(input, viaTable);
    const buffer = new Uint8Array(400);
    const written = coder.encoder.encode(input, input.length, buffer, 12);
    assert.equal(written, tableBytes);
    assert.deepEqual(buffer.subarray(12, 12 + written), viaTable.subarray(0, tableBytes));
    const back = new Int16Array(160);
    assert.equal(coder.decoder.decode(buffer, 12, 12 + written, back), 160);
    const viaTableBack = new Int16Array(160);
    getCodec(name)!.decode(viaTable.subarray(0, tableBytes), viaTableBack);
    assert.deepEqual(back, viaTableBack);
  }
});

test('Opus round trip: a 1 kHz tone and a 6 kHz tone come back at their frequency and level', () => {
  for (const frequency of [1000, 6000]) {
    const coder = createCoder('opus')!;
    const frame = OPUS_LINEAR_RATE / 50;
    const input = sine(frequency, OPUS_LINEAR_RATE, frame * 50, 8000);
    const output = new Int16Array(input.length);
    const packet = new Uint8Array(maxFrameBytes(coder));
    let bytes = 0;
    for (let start = 0; start < input.length; start += frame) {
      const length = coder.encoder.encode(input.subarray(start, start + frame), frame, packet, 0);
      assert.ok(length > 0 && length <= 1275);
      bytes += length;
      const room = output.subarray(start);
      assert.ok(coder.decoder.maxSamples(length) >= frame);
      assert.equal(coder.decoder.decode(packet, 0, length, room), frame);
    }
    const from = frame * 10;
    const tone = goertzelPower(output, frequency, OPUS_LINEAR_RATE, from, output.length);
    const total = meanSquare(output, from, output.length);
    assert.ok(tone / total > 0.8, `${frequency} Hz is ${((100 * tone) / total).toFixed(1)} % of the output`);
    assert.ok(Math.abs(toDb(tone / meanSquare(input, from, input.length))) < 2, `${frequency} Hz level kept within 2 dB`);
    assert.ok(bytes / 50 < 400, 'a voice bit rate, not a lossless one');
  }
});

test('Opus honours the far end: maxaveragebitrate caps the packets, a hostile packet decodes to nothing', () => {
  const frame = OPUS_LINEAR_RATE / 50;
  const input = sine(700, OPUS_LINEAR_RATE, frame, 12000);
  const size = (maxAverageBitrate: number) => {
    const coder = createCoder('opus', { opus: { maxAverageBitrate, cbr: true } })!;
    const packet = new Uint8Array(1275);
    let length = 0;
    for (let i = 0; i < 10; i++) length = coder.encoder.encode(input, frame, packet, 0);
    return length;
  };
  assert.ok(size(12000) <= 12000 / 8 / 50 + 2, `12 kbit/s: ${size(12000)} bytes a frame`);
  assert.ok(size(64000) > size(12000));
  const short = createCoder('opus')!;
  assert.ok(short.encoder.encode(input, frame - 20, new Uint8Array(1275), 0) > 0, 'a short frame (a resampler starting) is padded, not refused');
  assert.ok(short.encoder.encode(sine(700, OPUS_LINEAR_RATE, frame * 2, 9000), frame * 2, new Uint8Array(1275), 0) > 0, 'a long one is cut to 20 ms');
  const decoder = createCoder('opus')!.decoder;
  const output = new Int16Array(decoder.maxSamples(2000));
  assert.equal(decoder.decode(new Uint8Array(2000).fill(0xff), 0, 2000, output), 0, 'too long for a datagram');
  assert.equal(decoder.decode(new Uint8Array(0), 0, 0, output), 0);
  assert.equal(decoder.decode(new Uint8Array([0xff, 0xff, 0xff]), 0, 3, output), 0, 'an invalid packet');
});

test('transcoding between any two codecs through linear audio keeps a 1 kHz tone (decode, resample, encode, per stream)', () => {
  const names = ['ulaw', 'alaw', 'slin', 'g722', 'opus'] as const;
  for (const from of names) {
    for (const to of names) {
      if (from === to) continue;
      // The far end's encoder, our decoder for its leg, our encoder for the other leg, and the
      // other far end's decoder: four coders, each with its own state.
      const [farFrom, ourFrom, ourTo, farTo] = [createCoder(from)!, createCoder(from)!, createCoder(to)!, createCoder(to)!];
      const input = sine(1000, farFrom.rate, (farFrom.rate / 50) * 25, 8000);
      const resampler = createResampler(ourFrom.rate, ourTo.rate);
      const wire = new Uint8Array(1275);
      const linear = new Int16Array(ourFrom.decoder.maxSamples(1275));
      const converted = new Int16Array(ourTo.rate / 50);
      const heard = new Int16Array((ourTo.rate / 50) * 25);
      for (let frame = 0; frame < 25; frame++) {
        const inFrame = farFrom.rate / 50;
        const sent = farFrom.encoder.encode(input.subarray(frame * inFrame, (frame + 1) * inFrame), inFrame, wire, 0);
        const decoded = ourFrom.decoder.decode(wire, 0, sent, linear);
        assert.equal(decoded, ourFrom.rate / 50, `${from} decodes a whole frame`);
        const written = resampler.process(linear.subarray(0, decoded), converted);
        const out = ourTo.encoder.encode(converted, written, wire, 0);
        farTo.decoder.decode(wire, 0, out, heard.subarray(frame * converted.length));
      }
      const from10 = (ourTo.rate / 50) * 10;
      const share = goertzelPower(heard, 1000, ourTo.rate, from10, heard.length) / meanSquare(heard, from10, heard.length);
      assert.ok(share > 0.9, `${from} → ${to}: 1 kHz is ${(share * 100).toFixed(0)} % of what arrives`);
    }
  }
});
