// One suspect at a time, added to the bare floor process of bench/request-cpu-target.ts (issue 25's
// ping gap, bench/ping-gap.ts): PATCHBAY_BENCH_FLOOR_EXTRAS is a comma list, read by the bench target
// only. Each entry reproduces one thing the server process has that the bare floor has not, so that
// what it costs per ping is measured on its own instead of guessed:
//   import          the server's module graph loaded (server.ts, config), nothing started
//   default-metrics prom-client's collectDefaultMetrics on a registry of its own (as src/ops/metrics.ts)
//   eld             only its event-loop-delay monitor (perf_hooks, 10 ms resolution)
//   gc-observer     only its GC PerformanceObserver
//   regexp-flag     V8's linear-time regular-expression engine switched on (src/util/bounded-regex.ts)
//   worker          an idle worker thread with a 20 ms timer
//   media-worker    a media worker thread as the pool starts it (the compiled entry, unref'd, its
//                   messages listened to), without the pool or the server
//   worker-unref    an idle worker thread, unref'd as the pool's are
//   heap:N          N MB of small live objects in old space (a bigger heap to scan and promote into)
//   timers:N        N idle repeating 1 s timers (the server's sweeps and samplers)
//   udp:N           N bound, idle UDP sockets (SIP transports, RTP)
//   streams         data pushed once through Readable, Writable, Transform and PassThrough streams
//                   of other classes than a socket's (what a server's logs, files and pipes do): do
//                   Node's shared stream functions, seeing more kinds of object, get slower?
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import dgram from 'node:dgram';

/** What the extras hold alive (kept so nothing is collected), and how to stop them. */
export interface FloorExtras {
  readonly names: readonly string[];
  stop(): Promise<void>;
}

const KNOWN = new Set(['streams', 'media-worker', 'worker-unref', 'import', 'default-metrics', 'eld', 'gc-observer', 'regexp-flag', 'worker', 'heap', 'timers', 'udp']);

export async function startFloorExtras(list: string, compiledRoot: string | undefined): Promise<FloorExtras> {
  const names = list.split(',').map((entry) => entry.trim()).filter(Boolean);
  const stops: (() => unknown)[] = [];
  const held: unknown[] = [];
  for (const entry of names) {
    const [name = '', argument = ''] = entry.split(':');
    if (!KNOWN.has(name)) throw new Error(`PATCHBAY_BENCH_FLOOR_EXTRAS: unknown extra '${name}' (known: ${[...KNOWN].join(', ')})`);
    const count = Math.min(Math.max(Math.floor(Number(argument)) || 0, 0), 10_000);
    if (name === 'import') {
      const module = (path: string): string => (compiledRoot ? pathToFileURL(join(compiledRoot, `${path}.js`)).href : `../src/${path}.ts`);
      held.push(await import(module('config/config')), await import(module('server')));
    } else if (name === 'default-metrics') {
      const { collectDefaultMetrics, Registry } = await import('prom-client');
      const registry = new Registry();
      collectDefaultMetrics({ register: registry, prefix: 'floor_' });
      held.push(registry);
    } else if (name === 'eld') {
      const histogram = monitorEventLoopDelay({ resolution: 10 });
      histogram.enable();
      stops.push(() => histogram.disable());
    } else if (name === 'gc-observer') {
      const observer = new PerformanceObserver((list) => held.push(list.getEntries().length));
      observer.observe({ entryTypes: ['gc'] });
      stops.push(() => observer.disconnect());
    } else if (name === 'regexp-flag') {
      setFlagsFromString('--enable-experimental-regexp-engine');
    } else if (name === 'worker') {
      const worker = new Worker('setInterval(() => {}, 20);', { eval: true });
      stops.push(() => worker.terminate());
    } else if (name === 'media-worker' || name === 'worker-unref') {
      if (name === 'media-worker' && !compiledRoot) throw new Error('media-worker needs the compiled server (PATCHBAY_BENCH_ROOT)');
      const worker =
        name === 'media-worker'
          ? new Worker(new URL(pathToFileURL(join(compiledRoot!, 'media/workers/media-worker.js'))), { execArgv: [], env: { ...process.env, OPUS_FORCE_WASM: '1' } })
          : new Worker('setInterval(() => {}, 1000);', { eval: true });
      worker.unref();
      worker.on('message', (message: unknown) => held.push(message));
      stops.push(() => worker.terminate());
    } else if (name === 'streams') {
      const { Readable, Writable, Transform, PassThrough, pipeline } = await import('node:stream');
      class Source extends Readable {
        #left = 2000;
        override _read(): void {
          this.push(this.#left-- > 0 ? Buffer.from(`line ${this.#left}\n`) : null);
        }
      }
      class Upper extends Transform {
        override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null, data?: Buffer) => void): void {
          done(null, Buffer.from(chunk.toString().toUpperCase()));
        }
      }
      class Sink extends Writable {
        override _write(_chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
          done();
        }
      }
      for (let i = 0; i < 3; i++) await new Promise<void>((resolve, reject) => pipeline(new Source(), new PassThrough(), new Upper(), new Sink(), (error) => (error ? reject(error) : resolve())));
    } else if (name === 'heap') {
      // Objects of a few shapes, reachable, as a server's tables are: old space after two scavenges.
      const megabytes = count || 10;
      const objects: { id: number; name: string; next: unknown }[] = [];
      for (let i = 0; i < megabytes * 12_000; i++) objects.push({ id: i, name: `object-${i}`, next: objects[i - 1] });
      held.push(objects);
    } else if (name === 'timers') {
      for (let i = 0; i < (count || 10); i++) {
        const timer = setInterval(() => {}, 1000);
        stops.push(() => clearInterval(timer));
      }
    } else if (name === 'udp') {
      for (let i = 0; i < (count || 4); i++) {
        const socket = dgram.createSocket('udp4');
        socket.on('message', () => {});
        await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
        stops.push(() => socket.close());
      }
    }
  }
  return {
    names,
    async stop() {
      for (const stop of stops) await stop();
      held.length = 0;
    },
  };
}
