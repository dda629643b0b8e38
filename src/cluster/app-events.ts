// Events across members. An application's event WebSocket connects to one member, its *home*;
// the home announces it in the apps bucket, and every other member registers a relay in its
// place, so that Stasis(), originate and subscriptions there work as if the application were
// connected. The relay publishes each event it is given to the JetStream stream, subject
// `<prefix>.events.<app>`; the home consumes that subject and hands each event to the
// application through its own event log (numbered in arrival order, so `resumeAfter` works
// against the home). The home remembers which remote channels are in its applications, and when
// their member dies it raises their ChannelDestroyed (cause 38) itself.
import type { ConsumerMessages, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import type { ApplicationSink } from '../core/application-sink.ts';
import type { CoreEvent } from '../spec/events.ts';
import { formatAriDate } from '../util/ari-date.ts';
import { subjectToken } from './wire.ts';

/** How often the applications held here are compared with what the apps bucket says. */
const SCAN_MS = 250;
/** Events kept in the stream (a first stage: for replay by a later home, see docs/cluster.md). */
const STREAM_MAX_AGE_NS = 10 * 60 * 1e9;
/** Wait before trying again to consume an application's events after a failure. */
const RETRY_MS = 5000;
/** Remote channels remembered per application, so a flood cannot grow the table without end. */
const MAX_TRACKED = 100_000;

export const CAUSE_NETWORK_OUT_OF_ORDER = 38;

export interface AppEventsOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly apps: KV;
  readonly prefix: string;
  readonly stream: string;
  readonly node: string;
  /** This member's asterisk_id (what its events carry). */
  readonly asteriskId: string;
  readonly core: Core;
  readonly log: Logger;
}

/** A remote channel an application here is told about, with its last snapshot. */
interface TrackedChannel {
  readonly origin: string;
  snapshot: Record<string, unknown>;
}

interface Home {
  /** Undefined while the consumer is being made. */
  readonly messages: ConsumerMessages | undefined;
  readonly channels: Map<string, TrackedChannel>;
}

function isEvent(value: unknown): value is CoreEvent & Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const { type, timestamp } = value as Record<string, unknown>;
  return typeof type === 'string' && type.length <= 64 && typeof timestamp === 'string';
}

export class AppEvents {
  private readonly homes = new Map<string, Home>();
  /** Applications whose consumer could not be made, and when to try again (performance.now()). */
  private readonly retryAt = new Map<string, number>();
  private readonly options: AppEventsOptions;
  private scanTimer: NodeJS.Timeout | undefined;
  private stopWatching: (() => void) | undefined;
  /** Events published to the stream, and consumed from it (metrics, bench). */
  published = 0;
  consumed = 0;

  /** Stands in for an application connected to another member: its events go to the stream. */
  private readonly relay: ApplicationSink = {
    deliver: (application, _event, json) => {
      if (json === undefined) return; // about the connection itself (ApplicationReplaced): nothing to relay
      this.published++;
      this.options.js.publish(this.subject(application), json).catch((err: unknown) => this.options.log.warn({ err, application }, 'event not published to the cluster stream'));
    },
  };

  constructor(options: AppEventsOptions) {
    this.options = options;
  }

  async start(): Promise<void> {
    const { jsm, stream, prefix } = this.options;
    const config = { name: stream, subjects: [`${prefix}.events.>`], max_age: STREAM_MAX_AGE_NS };
    try {
      await jsm.streams.info(stream);
    } catch {
      await jsm.streams.add(config).catch(async () => jsm.streams.info(stream));
    }
    const watcher = await this.options.apps.watch();
    this.stopWatching = () => watcher.stop();
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') this.announced(entry.key, entry.string());
        else this.withdrawn(entry.key);
      }
    })().catch((err: unknown) => this.options.log.warn({ err }, 'cluster apps watch ended'));
    this.scanTimer = setInterval(() => this.scan(), SCAN_MS);
    this.scanTimer.unref();
  }

  stop(): void {
    clearInterval(this.scanTimer);
    this.stopWatching?.();
    for (const [name, home] of this.homes) {
      home.messages?.stop();
      this.options.apps.delete(subjectToken(name)).catch(() => undefined);
    }
    this.homes.clear();
  }

  /** Applications whose WebSocket is on this member. */
  homeApplications(): string[] {
    return [...this.homes.keys()];
  }

  /**
   * A member died: every application here is told ChannelDestroyed (cause 38, network out of
   * order) for each of that member's channels it was in, as that member would have told it.
   */
  memberDown(asteriskId: string): number {
    let ended = 0;
    for (const [application, home] of this.homes) {
      for (const [id, tracked] of home.channels) {
        if (tracked.origin !== asteriskId) continue;
        home.channels.delete(id);
        ended++;
        const destroyed: unknown = {
          type: 'ChannelDestroyed',
          timestamp: formatAriDate(),
          cause: CAUSE_NETWORK_OUT_OF_ORDER,
          cause_txt: 'Network out of order',
          channel: tracked.snapshot,
          asterisk_id: asteriskId,
        };
        if (isEvent(destroyed)) this.options.core.applications.sendTo(application, destroyed);
      }
    }
    return ended;
  }

  private subject(application: string): string {
    return `${this.options.prefix}.events.${subjectToken(application)}`;
  }

  /** Another member holds the application: a relay here, unless a connection here holds it. */
  private announced(key: string, value: string): void {
    let home: { node?: unknown; app?: unknown };
    try {
      home = JSON.parse(value) as { node?: unknown; app?: unknown };
    } catch {
      return;
    }
    if (typeof home.app !== 'string' || subjectToken(home.app) !== key || home.node === this.options.node) return;
    const applications = this.options.core.applications;
    const local = applications.get(home.app);
    if (local?.sink !== undefined && local.sink !== this.relay) {
      this.options.log.warn({ application: home.app, node: home.node }, 'application connected to two cluster members: each gets only its own events');
      return;
    }
    applications.register(home.app, this.relay, false);
  }

  private withdrawn(key: string): void {
    const applications = this.options.core.applications;
    for (const app of applications.list()) {
      if (app.sink === this.relay && subjectToken(app.name) === key) applications.deactivate(app.name, this.relay);
    }
  }

  /** Compares the applications a connection here holds with the homes kept. */
  private scan(): void {
    const applications = this.options.core.applications;
    const now = performance.now();
    for (const app of applications.list()) {
      if (app.sink === undefined || app.sink === this.relay || this.homes.has(app.name)) continue;
      if ((this.retryAt.get(app.name) ?? 0) > now) continue;
      this.becomeHome(app.name);
    }
    for (const [name, home] of this.homes) {
      const app = applications.get(name);
      // Still home while a connection holds it or its calls wait for one (held, not relayed).
      if (app !== undefined && app.sink !== this.relay) continue;
      home.messages?.stop();
      this.homes.delete(name);
      this.options.apps.delete(subjectToken(name)).catch(() => undefined);
    }
  }

  private becomeHome(application: string): void {
    const { js, apps, stream, node, log } = this.options;
    const channels = new Map<string, TrackedChannel>();
    // Placeholder until the consumer is made: scan() must not start a second one.
    const pending: Home = { messages: undefined, channels };
    this.homes.set(application, pending);
    void (async () => {
      const consumer = await js.consumers.get(stream, { filter_subjects: this.subject(application), deliver_policy: DeliverPolicy.New });
      const messages = await consumer.consume();
      if (this.homes.get(application) !== pending) return messages.stop();
      this.homes.set(application, { messages, channels });
      await apps.put(subjectToken(application), JSON.stringify({ node, app: application }));
      log.info({ application }, 'cluster: this member is the application\'s home');
      for await (const message of messages) this.received(application, channels, message.data);
    })().catch((err: unknown) => {
      log.error({ err, application }, 'cluster: cannot consume the application\'s events from the stream; trying again in 5 s');
      this.retryAt.set(application, performance.now() + RETRY_MS);
      if (this.homes.get(application) === pending) this.homes.delete(application);
    });
  }

  private received(application: string, channels: Map<string, TrackedChannel>, data: Uint8Array): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(data).toString('utf8'));
    } catch {
      return;
    }
    if (!isEvent(parsed)) return;
    const origin = typeof parsed.asterisk_id === 'string' ? parsed.asterisk_id : '';
    if (origin === this.options.asteriskId) return;
    this.consumed++;
    // The home numbers it anew; asterisk_id stays the owning member's.
    const { application: _application, sequence: _sequence, ...event } = parsed;
    this.track(channels, origin, event);
    if (isEvent(event)) this.options.core.applications.sendTo(application, event);
  }

  private track(channels: Map<string, TrackedChannel>, origin: string, event: Record<string, unknown>): void {
    const channel = event.channel as Record<string, unknown> | undefined;
    const id = channel && typeof channel.id === 'string' ? channel.id : undefined;
    if (id === undefined || channel === undefined) return;
    if (event.type === 'StasisEnd' || event.type === 'ChannelDestroyed') {
      channels.delete(id);
      return;
    }
    const known = channels.get(id);
    if (known) known.snapshot = channel;
    else if (event.type === 'StasisStart' && channels.size < MAX_TRACKED) channels.set(id, { origin, snapshot: channel });
  }
}
