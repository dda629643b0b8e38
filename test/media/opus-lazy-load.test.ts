// libopus is loaded by the first Opus coder a thread makes, not when the media modules are
// imported: an idle server, and one whose calls never agree on Opus, holds neither the native addon
// on its main thread nor a WebAssembly instance in each media worker. The first coder must still
// code at once, on the main thread (native build) and in a worker (WebAssembly build).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { opusLoaded } from '../../src/media/opus.ts';
import { createCoder } from '../../src/media/stream-coder.ts';

const tone = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 48000)));

function packageInRequireCache(): boolean {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).some((path) => path.includes('@evan/opus'));
}

/** Encodes and decodes one frame through a fresh coder pair; the decoded sample count. */
function codeOneFrame(): number {
  const coder = createCoder('opus');
  assert.ok(coder);
  const packet = new Uint8Array(1275);
  const length = coder.encoder.encode(tone, tone.length, packet, 0);
  assert.ok(length > 0, 'the first encoder codes');
  const samples = coder.decoder.decode(packet, 0, length, new Int16Array(5760));
  coder.encoder.release?.();
  coder.decoder.release?.();
  return samples;
}

describe('Opus loaded on first use', () => {
  // Runs first in this file's own process: nothing has made an Opus coder yet.
  test('importing the media modules and making G.711 coders does not load libopus', () => {
    assert.ok(createCoder('ulaw'));
    assert.ok(createCoder('g722'));
    assert.equal(opusLoaded(), false);
    assert.equal(packageInRequireCache(), false);
  });

  test('the first Opus coder on the main thread loads libopus and codes a frame', () => {
    assert.equal(codeOneFrame(), 960);
    assert.equal(opusLoaded(), true);
    assert.equal(codeOneFrame(), 960);
  });

  test('the first Opus coder in a worker loads the WebAssembly build and codes a frame', async () => {
    const opusModule = new URL('../../src/media/opus.ts', import.meta.url).href;
    const coderModule = new URL('../../src/media/stream-coder.ts', import.meta.url).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    // The worker as the pool starts one (OPUS_FORCE_WASM) and registers tsx to import sources.
    const body = `
      const { parentPort } = await import('node:worker_threads');
      (await import(${JSON.stringify(tsx)})).register();
      const { opusLoaded } = await import(${JSON.stringify(opusModule)});
      const { createCoder } = await import(${JSON.stringify(coderModule)});
      const before = opusLoaded();
      createCoder('ulaw');
      const afterG711 = opusLoaded();
      const coder = createCoder('opus');
      const tone = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / 48000)));
      const packet = new Uint8Array(1275);
      const length = coder.encoder.encode(tone, tone.length, packet, 0);
      const samples = coder.decoder.decode(packet, 0, length, new Int16Array(5760));
      parentPort.postMessage({ before, afterG711, after: opusLoaded(), length, samples });
    `;
    const worker = new Worker(`(async () => {${body}})()`, {
      eval: true,
      execArgv: [],
      env: { ...process.env, OPUS_FORCE_WASM: '1' },
    });
    const reply = await new Promise<unknown>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.ok(typeof reply === 'object' && reply !== null);
    assert.equal(Reflect.get(reply, 'before'), false);
    assert.equal(Reflect.get(reply, 'afterG711'), false);
    assert.equal(Reflect.get(reply, 'after'), true);
    assert.ok(Number(Reflect.get(reply, 'length')) > 0);
    assert.equal(Reflect.get(reply, 'samples'), 960);
  });
});
