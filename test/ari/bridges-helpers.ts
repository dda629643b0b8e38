// Shared set-up for the bridge and channel-media tests: Local calls originated into an app, an
// event log that can be searched and awaited, and audio helpers that write tones into channels on
// the media clock and capture what channels deliver, with measures taken by Goertzel's algorithm.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import { meanSquare } from '../../src/media/energy.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

export type AriEvent = Record<string, any> & { type: string };

/** Every event an app's socket received, in order, searchable and awaitable. */
export class EventLog {
  readonly all: AriEvent[] = [];
  private waiters: { match: (event: AriEvent) => boolean; from: number; resolve: (event: AriEvent) => void }[] = [];

  constructor(socket: EventSocket) {
    socket.socket.on('message', (data) => {
      const event = JSON.parse(String(data)) as AriEvent;
      this.all.push(event);
      const index = this.all.length - 1;
      for (const waiter of [...this.waiters]) {
        if (index >= waiter.from && waiter.match(event)) {
          this.waiters = this.waiters.filter((candidate) => candidate !== waiter);
          waiter.resolve(event);
        }
      }
    });
  }

  /** A position to search from later. */
  mark(): number {
    return this.all.length;
  }

  since(mark: number): AriEvent[] {
    return this.all.slice(mark);
  }

  /** The first event from `from` on (already received or still to come) that matches. */
  waitFor(what: string, match: (event: AriEvent) => boolean, from = 0, timeoutMs = 10_000): Promise<AriEvent> {
    const seen = this.all.slice(from).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        from,
        resolve: (event: AriEvent) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((candidate) => candidate !== waiter);
        reject(new Error(`${what}: timed out; saw ${this.all.slice(from).map((event) => event.type).join(', ')}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}

/** A test server (default settings) with an events socket subscribed to `app`, and its EventLog. */
export interface AppServer {
  readonly server: TestServer;
  readonly socket: EventSocket;
  readonly log: EventLog;
}

export async function startAppServer(app: string): Promise<AppServer> {
  const server = await startTestServer();
  const socket = await server.events(`app=${app}`);
  return { server, socket, log: new EventLog(socket) };
}

/** Closes what startAppServer started (what of it a failed start left undefined is passed over). */
export async function stopAppServer(started: { readonly server?: TestServer; readonly socket?: EventSocket }): Promise<void> {
  await started.socket?.close();
  await started.server?.stop();
}

/**
 * Registers `before`/`after` hooks in the current suite (or file): the app server starts before its
 * tests and is handed to `started` (the file keeps its own variables; a set-up of its own may follow
 * there), and stops after them, once `beforeStop` (peers of the file's own to close) has run.
 */
export function appServerInSuite(app: string, started: (appServer: AppServer) => unknown, beforeStop?: () => Promise<void>): void {
  let running: AppServer | undefined;
  before(async () => {
    running = await startAppServer(app);
    await started(running);
  });
  after(async () => {
    await beforeStop?.();
    await stopAppServer(running ?? {});
  });
}

export const isEvent =
  (type: string, channelId?: string) =>
  (event: AriEvent): boolean =>
    event.type === type && (channelId === undefined || event.channel?.id === channelId);

export async function call(server: TestServer, path: string, method = 'POST', body?: unknown): Promise<Response> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  return server.ari(path, init);
}

/** Sends a request and checks its status; returns the JSON body (or undefined for 204). */
export async function expectStatus(server: TestServer, path: string, status: number, method = 'POST', body?: unknown): Promise<any> {
  const response = await call(server, path, method, body);
  const text = await response.text();
  assert.equal(response.status, status, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

export interface LocalCall {
  /** The `;1` half, in the application. */
  readonly one: Channel;
  /** The `;2` half, running Answer/Wait in the dialplan: its far end is `one`. */
  readonly two: Channel;
}

/** Originates `Local/<exten>@default` into `app` with ids `id` / `id-2`; resolves once `;1` is in Stasis. */
export async function localCall(server: TestServer, log: EventLog, app: string, id: string, options: { callerId?: string; exten?: string; context?: string } = {}): Promise<LocalCall> {
  const endpoint = `Local/${options.exten ?? 'answer'}@${options.context ?? 'default'}`;
  const query = new URLSearchParams({ endpoint, app, otherChannelId: `${id}-2` });
  if (options.callerId) query.set('callerId', options.callerId);
  await expectStatus(server, `/channels/${id}?${query}`, 200);
  await log.waitFor(`StasisStart ${id}`, isEvent('StasisStart', id));
  const one = server.channel(id);
  const two = server.channel(`${id}-2`);
  assert.ok(one && two, 'both halves exist');
  return { one, two };
}

/** Hangs the calls up through ARI, destroys the bridges left, and checks that nothing remains. */
export async function finish(server: TestServer, calls: readonly LocalCall[], bridgeIds: readonly string[] = []): Promise<void> {
  for (const { one } of calls) {
    if (!one.hangingUp) await expectStatus(server, `/channels/${one.id}`, 204, 'DELETE');
  }
  for (const id of bridgeIds) {
    if (server.core.bridges.get(id)) await expectStatus(server, `/bridges/${id}`, 204, 'DELETE');
  }
  // Generous: hang-ups finish on the media clock, which a loaded machine slows.
  const deadline = Date.now() + 10_000;
  while ((server.allChannels().length > 0 || server.core.bridges.size > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(server.allChannels().length, 0, `channels left: ${server.allChannels().map((channel) => channel.name).join(', ')}`);
  assert.equal(server.core.bridges.size, 0, 'no bridges left');
}

// ---- audio ------------------------------------------------------------------------------------

const RATE = 8000;
const FRAME = 160;

/** Resolves after `count` more media clock ticks. */
export function ticks(server: TestServer, count: number): Promise<void> {
  const clock = server.core.media.clock;
  const target = clock.ticks + count;
  return new Promise((resolve) => {
    const listener = (): void => {
      if (clock.ticks < target) return;
      server.core.media.offTick(listener);
      resolve();
    };
    server.core.media.onTick(listener);
  });
}

export interface ToneWriter {
  /** First and (once stopped) last clock tick a frame was written on. */
  readonly firstTick: number;
  readonly lastTick: number;
  stop(): void;
}

/**
 * Writes a continuous sine, one 20 ms frame per media clock tick, with `write` (e.g. a channel's
 * write, towards its far end) until stopped.
 */
export function toneWriter(server: TestServer, write: (frame: { rate: 8000; samples: Int16Array }) => void, frequency: number, amplitude: number): ToneWriter {
  const frame: { rate: 8000; samples: Int16Array } = { rate: RATE, samples: new Int16Array(FRAME) };
  let phase = 0;
  const step = (2 * Math.PI * frequency) / RATE;
  const state = { firstTick: -1, lastTick: -1 };
  const listener = (tick: number): void => {
    for (let i = 0; i < FRAME; i++) {
      frame.samples[i] = Math.round(amplitude * Math.sin(phase));
      phase += step;
      if (phase >= 2 * Math.PI) phase -= 2 * Math.PI;
    }
    if (state.firstTick < 0) state.firstTick = tick;
    state.lastTick = tick;
    write(frame);
  };
  server.core.media.onTick(listener);
  return {
    get firstTick() {
      return state.firstTick;
    },
    get lastTick() {
      return state.lastTick;
    },
    stop: () => server.core.media.offTick(listener),
  };
}

export interface Capture {
  /** Copies of the frames received, with the clock tick they arrived on. */
  readonly frames: { tick: number; samples: Int16Array }[];
  /** The samples of the frames received on ticks [from, to]. */
  between(from: number, to: number): Int16Array;
  stop(): void;
}

/** Records every frame a channel delivers (the audio it receives from its far end). */
export function capture(server: TestServer, channel: Channel): Capture {
  const frames: { tick: number; samples: Int16Array }[] = [];
  const listener = (frame: { samples: Int16Array; rate: number }): void => {
    assert.equal(frame.rate, RATE);
    // The clock counts a tick before running its listeners: the tick running now is ticks - 1.
    frames.push({ tick: server.core.media.clock.ticks - 1, samples: Int16Array.from(frame.samples) });
  };
  channel.addFrameListener(listener);
  return {
    frames,
    between(from, to) {
      const picked = frames.filter((frame) => frame.tick >= from && frame.tick <= to);
      const out = new Int16Array(picked.length * FRAME);
      picked.forEach((frame, index) => out.set(frame.samples, index * FRAME));
      return out;
    },
    stop: () => channel.removeFrameListener(listener),
  };
}

export interface ToneMeasure {
  /** Peak amplitude of the component at the frequency asked. */
  readonly amplitude: number;
  /** Overall RMS. */
  readonly rms: number;
  /** Share of the block's power at that frequency (1 for a pure tone). */
  readonly purity: number;
  /** Frequency estimated from zero crossings. */
  readonly frequency: number;
}

export function measure(samples: Int16Array, frequency: number): ToneMeasure {
  const power = goertzelPower(samples, frequency, RATE);
  const total = meanSquare(samples);
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) {
    if ((samples[i - 1] < 0 && samples[i] >= 0) || (samples[i - 1] >= 0 && samples[i] < 0)) crossings++;
  }
  return {
    amplitude: powerToAmplitude(power),
    rms: Math.sqrt(total),
    purity: total === 0 ? 0 : power / total,
    frequency: samples.length === 0 ? 0 : (crossings / 2) * (RATE / samples.length),
  };
}

/** Per-frame RMS values (for "energy in every frame" checks). */
export function frameRms(samples: Int16Array): number[] {
  const out: number[] = [];
  for (let start = 0; start + FRAME <= samples.length; start += FRAME) out.push(Math.sqrt(meanSquare(samples, start, start + FRAME)));
  return out;
}
