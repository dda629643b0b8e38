// Starts a real Patchbay on an ephemeral 127.0.0.1 port with a temporary data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { loadConfig, type DeepPartialYaml, type PatchbayConfig } from '../../src/config/config.ts';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelTechnology } from '../../src/core/channels/technology.ts';
import type { MediaEngine } from '../../src/core/media-engine.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { CLUSTER_MODE, startClusterMembers, type ClusterMembers } from './cluster-server.ts';

export interface TestServer extends RunningServer {
  readonly config: PatchbayConfig;
  /** The configuration `overrides` give on the test base (not on those it started with): for applyConfig, as a SIGHUP reload. */
  configWith(overrides: DeepPartialYaml): PatchbayConfig;
  readonly dataDir: string;
  /** Captured log lines (JSON). */
  readonly logLines: string[];
  /** fetch() against /ari with the default credentials unless headers say otherwise. */
  ari(path: string, init?: RequestInit & { auth?: string | null }): Promise<Response>;
  /** In cluster mode (PATCHBAY_TEST_CLUSTER=1): all three members; this server is B. */
  readonly clusterMembers?: ClusterMembers;
  /** The channel of that id on whichever cluster member holds it (this server's own outside cluster mode). */
  channel(id: string): Channel | undefined;
  /** The channels of every cluster member (this server's own outside cluster mode): for leak checks. */
  allChannels(): Channel[];
  /**
   * The media engine of the member holding the channel (this server's outside cluster mode): audio
   * a test plays into a channel must be paced by the clock of the member recording it, as a real
   * far end's audio arrives at its own member. Two members' clocks in one loaded process run their
   * overdue ticks in bursts one after the other, and a recording taking one frame per tick would
   * then get silence for most of a burst.
   */
  mediaOf(channel: Channel): MediaEngine;
  /** Opens the event WebSocket for the given apps and collects its messages. */
  events(query: string, options?: WebSocket.ClientOptions & { protocols?: string | string[] }): Promise<EventSocket>;
}

export const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

export interface TestServerOptions {
  /**
   * Use this data directory instead of a fresh temporary one (e.g. to restart a server on the
   * data of an earlier one). The caller owns it: stop() leaves it in place.
   */
  readonly dataDir?: string;
  /** Channel technologies to run beside the built-in ones. */
  readonly technologies?: readonly ChannelTechnology[];
  /** The overrides a module reload reads (`module reload cdr`); default: those it started with. */
  readonly reloadOverrides?: () => DeepPartialYaml;
  /**
   * Three cluster members, this server being B (test/helpers/cluster-server.ts); default:
   * PATCHBAY_TEST_CLUSTER=1, unless the test makes a cluster member of its own (`cluster.nats_url`
   * in its overrides: test/cluster/), which is started as it asks in either mode.
   */
  readonly cluster?: boolean;
  /**
   * In cluster mode, whether A and C record into B's recordings directory (default true: tests read
   * the files there); false gives each member its own, as the stored-recording forwarding needs.
   */
  readonly clusterSharedRecordings?: boolean;
}

export async function startTestServer(overrides: DeepPartialYaml = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'patchbay-test-'));
  const base: DeepPartialYaml = {
    http: { port: 0, bind: '127.0.0.1' },
    dirs: { data: dataDir },
    ari: { developer_mode: true },
    logging: { console: false, level: 'debug' },
    // An ephemeral SIP port: test servers run side by side.
    sip: { port: 0 },
  };
  // PATCHBAY_MEDIA_WORKERS runs a whole suite with another media.workers (0: media on the main thread).
  const env = process.env.PATCHBAY_MEDIA_WORKERS === undefined ? {} : { PATCHBAY_MEDIA_WORKERS: process.env.PATCHBAY_MEDIA_WORKERS };
  const config = loadConfig({ path: null, env, overrides: merge(base, overrides) });
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  // In cluster mode, B's own cluster settings stay in what a reload reads.
  let memberOverrides: DeepPartialYaml = {};
  const configWith = (more: DeepPartialYaml): PatchbayConfig => loadConfig({ path: null, env: {}, overrides: merge(merge(base, more), memberOverrides) });
  const reloadOverrides = options.reloadOverrides;
  let server: RunningServer;
  let clusterMembers: ClusterMembers | undefined;
  let serverConfig = config;
  if (options.cluster ?? (CLUSTER_MODE && overrides.cluster?.nats_url === undefined)) {
    // Three members with the test's configuration; the test talks to B (test/helpers/cluster-server.ts).
    clusterMembers = await startClusterMembers(async (member, name) => {
      const memberConfig = loadConfig({ path: null, env, overrides: merge(merge(base, overrides), member) });
      if (name === 'b') {
        serverConfig = memberConfig;
        memberOverrides = member;
      }
      const memberReload = reloadOverrides ? () => loadConfig({ path: null, env: {}, overrides: merge(merge(base, reloadOverrides()), member) }) : undefined;
      // A technology object serves one core: B's only.
      return startServer(memberConfig, { logDestination: destination, technologies: name === 'b' ? options.technologies : undefined, readConfig: memberReload });
    }, dataDir, { sounds: config.dirs.sounds, moh: config.dirs.moh, recordings: options.clusterSharedRecordings === false ? undefined : config.dirs.recordings });
    server = clusterMembers.b;
  } else {
    server = await startServer(config, { logDestination: destination, technologies: options.technologies, readConfig: reloadOverrides ? () => configWith(reloadOverrides()) : undefined });
  }
  const everyMember = clusterMembers ? [clusterMembers.a, clusterMembers.b, clusterMembers.c] : [server];
  const stopServer = clusterMembers?.stop ?? (() => server.stop());
  return {
    ...server,
    config: serverConfig,
    clusterMembers,
    configWith,
    dataDir,
    logLines,
    async stop() {
      await stopServer();
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    ari(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.auth !== null && !headers.has('authorization')) headers.set('authorization', init.auth ?? AUTH);
      return fetch(`${server.url}/ari${path}`, { ...init, headers });
    },
    channel(id) {
      for (const member of everyMember) {
        const channel = member.core.channels.get(id);
        if (channel) return channel;
      }
      return undefined;
    },
    allChannels() {
      return everyMember.flatMap((member) => member.core.channels.list());
    },
    mediaOf(channel) {
      return (everyMember.find((member) => member.core.channels.get(channel.id) === channel) ?? server).core.media;
    },
    events(query, options = {}) {
      const { protocols, ...rest } = options;
      const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?${query}`, protocols, {
        headers: { authorization: AUTH },
        ...rest,
      });
      return EventSocket.open(socket);
    },
  };
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const existing = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && existing && typeof existing === 'object' && !Array.isArray(existing)
        ? merge(existing as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

/** How long next() and nextOfType() wait unless told (was 2 s, too short under CI load). */
const DEFAULT_EVENT_WAIT_MS = 10_000;

/** A connected event WebSocket that queues incoming messages for `next()`. */
export class EventSocket {
  readonly messages: Record<string, unknown>[] = [];
  private waiters: ((message: Record<string, unknown>) => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      const waiter = this.waiters.shift();
      if (waiter) waiter(message);
      else this.messages.push(message);
    });
  }

  static open(socket: WebSocket): Promise<EventSocket> {
    const events = new EventSocket(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(events));
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
  }

  /**
   * The next message, waiting up to `timeoutMs`. 10 s by default: an event comes within
   * milliseconds on an idle machine and seconds later on a loaded one (CI); the bound only ends a
   * test that would otherwise hang. A test that an event must NOT come uses quiet().
   */
  next(timeoutMs = DEFAULT_EVENT_WAIT_MS): Promise<Record<string, unknown>> {
    const queued = this.messages.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error('timed out waiting for an event'));
      }, timeoutMs);
      const waiter = (message: Record<string, unknown>): void => {
        clearTimeout(timer);
        resolve(message);
      };
      this.waiters.push(waiter);
    });
  }

  /** Waits for the next message of the given type, skipping others. */
  async nextOfType(type: string, timeoutMs = DEFAULT_EVENT_WAIT_MS): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (message.type === type) return message;
    }
  }

  /** Waits for the next message `match` accepts, skipping others. */
  async nextMatching(match: (message: Record<string, unknown>) => boolean, timeoutMs = DEFAULT_EVENT_WAIT_MS): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (match(message)) return message;
    }
  }

  /** Asserts nothing arrives within `ms`; returns what did arrive. */
  async quiet(ms = 200): Promise<Record<string, unknown>[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.messages.splice(0);
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
