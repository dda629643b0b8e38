// A stream's Opus coders are freed when the stream is done with them (release()): in a media worker
// they are libopus's WebAssembly build, whose heap grows and never shrinks, so waiting for the
// garbage collector would keep every ended call's state there until it ran. A released coder codes
// nothing (0), and never throws.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { OpusStreamDecoder, OpusStreamEncoder } from '../../src/media/opus.ts';
import { RtpPayloadCoder } from '../../src/media/rtp/payload.ts';

const tone = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 48000)));

describe('Opus coders released', () => {
  test('a released encoder and decoder code nothing and do not throw', () => {
    const encoder = new OpusStreamEncoder(48000);
    const decoder = new OpusStreamDecoder(48000);
    const packet = new Uint8Array(1275);
    const length = encoder.encode(tone, tone.length, packet, 0);
    assert.ok(length > 0);
    assert.equal(decoder.decode(packet, 0, length, new Int16Array(5760)), 960);
    encoder.release();
    decoder.release();
    decoder.release();
    assert.equal(encoder.encode(tone, tone.length, packet, 0), 0);
    assert.equal(decoder.decode(packet, 0, length, new Int16Array(5760)), 0);
    encoder.reset();
    decoder.reset();
    encoder.configure({ dtx: true });
  });

  test('an RTP payload coder releases both sides of its frame codec; a sample codec has nothing to release', () => {
    const opus = new RtpPayloadCoder('opus');
    const packet = new Uint8Array(1275);
    assert.ok(opus.encode(tone, packet, 0) > 0);
    opus.release();
    assert.equal(opus.encode(tone, packet, 0), 0);
    const ulaw = new RtpPayloadCoder('ulaw');
    ulaw.release();
    assert.equal(ulaw.encode(new Int16Array(160), new Uint8Array(160), 0), 160);
  });

  test('with the WebAssembly build (a media worker\'s), 2,000 released streams leave its heap as it was', { timeout: 120_000 }, () => {
    // A process of its own: the build is chosen when the package loads. A synchronous loop, so no
    // garbage collector finalizes anything meanwhile: only release() frees.
    const script = `
      const { OpusStreamDecoder, OpusStreamEncoder } = await import(${JSON.stringify(new URL('../../src/media/opus.ts', import.meta.url).href)});
      const pcm = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 48000)));
      const packet = new Uint8Array(1275);
      const out = new Int16Array(5760);
      const run = (release) => {
        const before = process.memoryUsage().external;
        for (let call = 0; call < 2000; call++) {
          const encoder = new OpusStreamEncoder(48000);
          const decoder = new OpusStreamDecoder(48000);
          for (let frame = 0; frame < 3; frame++) decoder.decode(packet, 0, encoder.encode(pcm, 960, packet, 0), out);
          if (release) { encoder.release(); decoder.release(); }
        }
        return (process.memoryUsage().external - before) / 1048576;
      };
      const released = run(true);
      const kept = run(false);
      process.stdout.write(JSON.stringify({ released, kept }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, OPUS_FORCE_WASM: '1' }, encoding: 'utf8', timeout: 110_000 });
    assert.equal(child.status, 0, child.stderr);
    const grown = JSON.parse(child.stdout) as { released: number; kept: number };
    process.stdout.write(`WebAssembly heap growth over 2,000 streams: ${grown.released.toFixed(1)} MiB released, ${grown.kept.toFixed(1)} MiB not\n`);
    assert.ok(grown.released < 20, `the heap grew ${grown.released.toFixed(1)} MiB over 2,000 released streams`);
    // The contrast: the same streams not released hold their state until collected.
    assert.ok(grown.kept > grown.released + 40, `unreleased: ${grown.kept.toFixed(1)} MiB, released: ${grown.released.toFixed(1)} MiB`);
  });
});
