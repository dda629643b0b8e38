// Shared set-up for the playback tests: a real server, an event socket for one application, Local
// pairs whose ;1 half is in that application, event waits by playback id, and audio capture on a
// channel with a tone-energy measure.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Channel } from '../../src/core/channels/channel.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

export type Json = Record<string, any>;

export interface PlaybackServer {
  readonly server: TestServer;
  /** The event socket of the application the tests' channels are in. */
  readonly events: EventSocket;
  stop(): Promise<void>;
}

/**
 * A server whose only sounds are the generated prompts (a 250 ms 1 kHz beep: an installed Asterisk
 * beep.wav would win otherwise), with an event socket for `app`.
 */
export async function startPromptsOnlyServer(app: string): Promise<PlaybackServer> {
  const sounds = mkdtempSync(join(tmpdir(), 'patchbay-no-sounds-'));
  const server = await startTestServer({ dirs: { sounds: [sounds] } });
  const events = await server.events(`app=${app}`);
  return {
    server,
    events,
    async stop() {
      await events.close();
      await server.stop();
      rmSync(sounds, { recursive: true, force: true });
    },
  };
}

/**
 * Registers `before`/`after` hooks in the current suite (or file): a prompts-only server for `app`
 * starts before its tests and is handed to `started`, and stops after them.
 */
export function promptsOnlyServerInSuite(app: string, started: (playbackServer: PlaybackServer) => unknown): void {
  let running: PlaybackServer | undefined;
  before(async () => {
    running = await startPromptsOnlyServer(app);
    started(running);
  });
  after(() => running?.stop());
}

export interface Pair {
  readonly one: Channel;
  readonly two: Channel;
}

/** Originates `Local/<exten>@default` into `app`; resolves once the ;1 half is in Stasis. */
export async function pair(server: TestServer, events: EventSocket, app: string, id: string, exten = 'answer'): Promise<Pair> {
  const response = await server.ari(`/channels/${id}?endpoint=Local/${exten}@default&app=${app}&otherChannelId=${id}-2`, { method: 'POST' });
  assert.equal(response.status, 200, await response.clone().text());
  await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === id);
  return { one: server.channel(id)!, two: server.channel(`${id}-2`)! };
}

/** The next event satisfying `match`, skipping others. */
export async function nextEvent(events: EventSocket, match: (event: Json) => boolean, timeoutMs = 4000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error('timed out waiting for an event');
    const event = (await events.next(remaining)) as Json;
    if (match(event)) return event;
  }
}

/**
 * When the server raised an event, in ms since the epoch, from its `timestamp`
 * (`YYYY-MM-DDTHH:MM:SS.mmm+ZZZZ`): durations measured on it are free of delivery delays.
 */
export function raisedAt(event: Json): number {
  const at = Date.parse(String(event.timestamp).replace(/(\d\d)(\d\d)$/, '$1:$2'));
  assert.ok(Number.isFinite(at), `timestamp ${event.timestamp}`);
  return at;
}

/** The next playback event of `type` for playback `id`; `at` is when the server raised it. */
export async function playbackEvent(events: EventSocket, type: string, id: string, timeoutMs = 4000): Promise<Json & { at: number }> {
  const event = await nextEvent(events, (candidate) => candidate.type === type && candidate.playback?.id === id, timeoutMs);
  return { ...event, at: raisedAt(event) };
}

/** Every playback event of playback `id` until its PlaybackFinished (included). */
export async function playbackEvents(events: EventSocket, id: string, timeoutMs = 6000): Promise<Json[]> {
  const seen: Json[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = await nextEvent(events, (candidate) => candidate.playback?.id === id, Math.max(1, deadline - Date.now()));
    seen.push({ ...event, at: raisedAt(event) });
    if (event.type === 'PlaybackFinished') return seen;
  }
}

export async function post(server: TestServer, path: string): Promise<Response> {
  return server.ari(path, { method: 'POST' });
}

/** Starts a playback and checks the 201 + Location answer; returns the Playback body. */
export async function play(server: TestServer, path: string): Promise<Json> {
  const response = await post(server, path);
  assert.equal(response.status, 201, `${path}: ${response.status} ${await response.clone().text()}`);
  const body = (await response.json()) as Json;
  assert.equal(response.headers.get('location'), `/ari/playbacks/${encodeURIComponent(body.id)}`);
  return body;
}

export async function control(server: TestServer, id: string, operation: string): Promise<number> {
  return (await post(server, `/playbacks/${encodeURIComponent(id)}/control?operation=${operation}`)).status;
}

export async function status(server: TestServer, path: string, init: RequestInit = {}): Promise<number> {
  const response = await server.ari(path, init);
  await response.arrayBuffer();
  return response.status;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Records what a channel receives from its far end, frame by frame, with arrival times. */
export class Capture {
  readonly frames: { at: number; samples: Int16Array }[] = [];
  private readonly listener = (frame: { samples: Int16Array }): void => {
    this.frames.push({ at: Date.now(), samples: Int16Array.from(frame.samples) });
  };

  constructor(private readonly channel: Channel) {
    channel.addFrameListener(this.listener);
  }

  stop(): void {
    this.channel.removeFrameListener(this.listener);
  }

  /** The samples of the frames received in [from, to) (arrival times), concatenated. */
  samples(from = 0, to = Infinity): Int16Array {
    const chosen = this.frames.filter((frame) => frame.at >= from && frame.at < to);
    const out = new Int16Array(chosen.reduce((total, frame) => total + frame.samples.length, 0));
    let offset = 0;
    for (const frame of chosen) {
      out.set(frame.samples, offset);
      offset += frame.samples.length;
    }
    return out;
  }

  /** Frames whose power at `frequency` is at least `minAmplitude` peak. */
  toneFrames(frequency: number, minAmplitude = 1000): number {
    return this.frames.filter((frame) => Math.sqrt(2 * goertzelPower(frame.samples, frequency, 8000)) >= minAmplitude).length;
  }
}

/** Peak amplitude of the component at `frequency` in `samples` (8 kHz). */
export function toneAmplitude(samples: Int16Array, frequency: number): number {
  if (samples.length === 0) return 0;
  return Math.sqrt(2 * goertzelPower(samples, frequency, 8000));
}
