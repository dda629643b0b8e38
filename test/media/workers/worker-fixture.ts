// What the media-worker tests set up alike: a pool of workers on a main clock of its own for one
// describe block (started and loaded before its tests, stopped after), a stream opened once a worker
// is ready, loopback sockets for the far ends, a random base for the streams' port range (so that
// test files running at once rarely meet), and a wait that polls with a generous deadline.
import { after, before } from 'node:test';
import { MediaClock } from '../../../src/media/clock.ts';
import { MediaWorkerPool, type MediaWorkerPoolOptions, type OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteRtpStream } from '../../../src/media/workers/remote-stream.ts';
import { loopbackSocket } from '../../helpers/loopback-udp.ts';

export { loopbackSocket };

/** Polls `condition` every 20 ms; throws naming `what` after `ms`. */
export async function waitFor(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An even port in [from, from + 2·spread): where a test's stream port range starts. */
export function randomPortBase(from: number, spread: number): number {
  return from + 2 * Math.floor(Math.random() * spread);
}

/** The pool a describe block's tests use (set before its first test). */
export interface WorkerPoolFixture {
  readonly pool: MediaWorkerPool;
}

/**
 * Registers, in the calling describe block, a pool of `size` workers: started with a main clock of its
 * own and every worker loaded before the tests, stopped after them.
 */
export function useWorkerPool(size: number, options: Pick<MediaWorkerPoolOptions, 'onWorkerExit'> = {}): WorkerPoolFixture {
  const clock = new MediaClock();
  const mainClock = { get ticks() { return clock.ticks; }, onTick: (l: () => void) => clock.add(l), offTick: (l: () => void) => clock.remove(l) };
  let pool: MediaWorkerPool | undefined;
  before(async () => {
    clock.start();
    const started = new MediaWorkerPool({ size, clock: mainClock, ...options });
    pool = started;
    await waitFor(() => started.loads().every((load) => load.running), size === 1 ? 'the worker to load' : 'the workers to load', 60_000);
  });
  after(async () => {
    await pool?.stop();
    clock.stop();
  });
  return {
    get pool(): MediaWorkerPool {
      if (!pool) throw new Error('the worker pool is set up before the first test');
      return pool;
    },
  };
}

/** Opens a stream once a worker is ready (a new pool's workers take a moment to load). */
export async function openWhenReady(pool: MediaWorkerPool, request: OpenRequest): Promise<RemoteRtpStream> {
  let opening: Promise<RemoteRtpStream> | undefined;
  await waitFor(() => (opening = pool.open(request)) !== undefined, 'a ready worker');
  return opening!;
}
