// Shared set-up for the dialplan application tests: a real server running a dialplan written to a
// temporary extensions.conf, an event WebSocket subscribed to everything, and calls placed
// through the core the way originate does (request a channel, dial it).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeepPartialYaml } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import { dial, type DialStatus } from '../../src/core/channels/dialer.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

export type AriEvent = Record<string, unknown> & { type: string };

export interface PbxServer {
  readonly server: TestServer;
  stop(): Promise<void>;
}

/** Starts a server on `dialplan` (extensions.conf text), or on the embedded default when null. */
export async function startPbxServer(dialplan: string | null, overrides: DeepPartialYaml = {}): Promise<PbxServer> {
  if (dialplan === null) {
    const server = await startTestServer(overrides);
    return { server, stop: () => server.stop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-pbx-'));
  const file = join(dir, 'extensions.conf');
  writeFileSync(file, dialplan);
  const server = await startTestServer({ ...overrides, dialplan: { file } });
  return {
    server,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An event socket for `app` that sees every event of the server. */
export function watchAll(server: TestServer, app = 'pbx-watch'): Promise<EventSocket> {
  return server.events(`app=${app}&subscribeAll=true`);
}

/** A server on a dialplan and a watcher of all its events: what most suites start once for all their tests. */
export interface WatchedPbx {
  readonly pbx: PbxServer;
  readonly events: EventSocket;
}

/** startPbxServer, then watchAll on it (the server is stopped again if the watcher cannot connect). */
export async function startWatchedPbx(dialplan: string | null): Promise<WatchedPbx> {
  const pbx = await startPbxServer(dialplan);
  try {
    return { pbx, events: await watchAll(pbx.server) };
  } catch (error) {
    await pbx.stop();
    throw error;
  }
}

/** Closes the watcher, then stops the server; either may be missing (a before() that failed). */
export async function stopWatchedPbx({ pbx, events }: Partial<WatchedPbx>): Promise<void> {
  await events?.close();
  await pbx?.stop();
}

/**
 * Registers the file's before() and after(): a watched server on `dialplan` for all its tests,
 * handed to `started` once up (the suite keeps `pbx` and `events` as it likes), stopped at the end.
 */
export function withPbxEvents(dialplan: string | null, started: (watched: WatchedPbx) => void): void {
  let watched: WatchedPbx | undefined;
  before(async () => {
    watched = await startWatchedPbx(dialplan);
    started(watched);
  });
  after(() => stopWatchedPbx(watched ?? {}));
}

/** Collects events until `done` holds for one of them (included), or fails after `timeoutMs`. */
// 15 s by default: a call's dialplan takes a second or two on an idle machine, many more on a loaded
// one (CI); the bound only ends a test that would otherwise hang.
export async function collectUntil(events: EventSocket, done: (event: AriEvent) => boolean, timeoutMs = 15_000): Promise<AriEvent[]> {
  const deadline = Date.now() + timeoutMs;
  const seen: AriEvent[] = [];
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`timed out; saw ${seen.map((event) => event.type).join(', ')}`);
    let event: AriEvent;
    try {
      event = (await events.next(remaining)) as AriEvent;
    } catch {
      throw new Error(`timed out; saw ${seen.map((event) => event.type).join(', ')}`);
    }
    seen.push(event);
    if (done(event)) return seen;
  }
}

/** Collects events until each predicate has held for some event. */
export function collectUntilAll(events: EventSocket, predicates: readonly ((event: AriEvent) => boolean)[], timeoutMs = 15_000): Promise<AriEvent[]> {
  const pending = new Set(predicates);
  return collectUntil(
    events,
    (event) => {
      for (const predicate of pending) if (predicate(event)) pending.delete(predicate);
      return pending.size === 0;
    },
    timeoutMs,
  );
}

export const channelOf = (event: AriEvent): Record<string, unknown> => (event.channel ?? {}) as Record<string, unknown>;
export const channelName = (event: AriEvent): string => String(channelOf(event).name ?? '');

/** Collects events until every named channel has been destroyed. */
export async function untilDestroyed(events: EventSocket, channels: readonly Channel[], timeoutMs = 3000): Promise<AriEvent[]> {
  // Events are queued on the socket, so channels already gone are still found there.
  const waiting = new Set(channels.map((channel) => channel.id));
  return collectUntil(
    events,
    (event) => {
      if (event.type === 'ChannelDestroyed') waiting.delete(String(channelOf(event).id));
      return waiting.size === 0;
    },
    timeoutMs,
  );
}

/** Originates the way POST /channels does: requests `endpoint` and dials it. */
export function originate(server: TestServer, endpoint: string, timeoutMs = 0): { one: Channel; two: Channel; status: Promise<DialStatus> } {
  const one = server.core.channels.request(endpoint);
  const status = dial(one, { dialstring: endpoint.slice(endpoint.indexOf('/') + 1), timeoutMs });
  assert.ok(one.peer, 'a Local channel comes as a pair');
  return { one, two: one.peer, status };
}

/** ChannelDialplan events of one channel, as `App(data)@context,exten,priority`. */
export function dialplanTrace(events: readonly AriEvent[], name: string): string[] {
  return events
    .filter((event) => event.type === 'ChannelDialplan' && channelName(event) === name)
    .map((event) => {
      const dialplan = channelOf(event).dialplan as Record<string, unknown>;
      return `${String(event.dialplan_app)}(${String(event.dialplan_app_data)})@${String(dialplan.context)},${String(dialplan.exten)},${String(dialplan.priority)}`;
    });
}

/** The values a channel's ChannelVarset events gave `variable`, in order. */
export function varsets(events: readonly AriEvent[], name: string, variable: string): string[] {
  return events
    .filter((event) => event.type === 'ChannelVarset' && channelName(event) === name && event.variable === variable)
    .map((event) => String(event.value));
}

export function assertNoChannels(server: TestServer): void {
  assert.equal(server.core.channels.size, 0, `channels left: ${server.core.channels.list().map((channel) => channel.name).join(', ')}`);
}
