// Events across members. An application's event WebSocket connects to one member, its *home*;
// the home announces it in the apps bucket, and every other member registers a relay in its
// place, so that Stasis(), originate and subscriptions there work as if the application were
// connected. The relay publishes each event it is given to the JetStream stream, subject
// `<prefix>.events.<app>`; the home consumes that subject and hands each event to the
// application through its own event log (numbered in arrival order, so `resumeAfter` works
// against the home). The home remembers which remote channels are in its applications, and when
// their member dies it raises their ChannelDestroyed (cause 38) itself. The home's entry in the
// bucket (app-announcement.ts) also names the applications sharing the connection, whose relayed
// events are handed over in their source's order (event-order.ts), and says when the connection is
// away and until when calls sent to it wait on every member (held-calls.ts).
import type { ConsumerMessages, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import type { ApplicationSink } from '../core/application-sink.ts';
import type { CoreEvent } from '../spec/events.ts';
import { formatAriDate } from '../util/ari-date.ts';
import { parseAnnouncement } from './app-announcement.ts';
import { ORDER_HEADER, OrderedDelivery, parseOrderTag, RelayOrder, type Relayed } from './event-order.ts';
import { HomeAnnouncer } from './home-announcer.ts';
import { subjectToken } from './wire.ts';

/** How often the applications held here are compared with what the apps bucket says. */
const SCAN_MS = 250;
/** Events kept in the stream (a first stage: for replay by a later home, see docs/cluster.md). */
const STREAM_MAX_AGE_NS = 10 * 60 * 1e9;
/** Wait before trying again to consume an application's events after a failure. */
const RETRY_MS = 5000;
/** How long a home made for a connection being accepted waits for the connection to hold the application. */
const PREPARED_GRACE_MS = 5000;
/** Applications a forwarded request may name that are looked up in the apps bucket. */
const MAX_APPS_LOOKED_UP = 16;
/** Remote channels remembered per application, so a flood cannot grow the table without end. */
const MAX_TRACKED = 100_000;
/** Longest a relayed event waits for another application's event it follows (event-order.ts). */
const ORDER_MAX_HOLD_MS = 1000;
/** Most relayed events held for their order at once. */
const ORDER_MAX_HELD = 10_000;

export const CAUSE_NETWORK_OUT_OF_ORDER = 38;

export interface AppEventsOptions {
  /** Publishes into the stream without waiting for JetStream's acknowledgement (see publish()). */
  readonly nc: NatsConnection;
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
  /** The asterisk_ids of the live members, this one included. */
  readonly liveAsteriskIds: () => ReadonlySet<string>;
  /**
   * The application is back at its home (here) after its calls were held on every member: lets the
   * channels waiting on the other members in, in arrival order (held-calls.ts), before the apps
   * bucket tells them it is back.
   */
  readonly releaseHeld?: (application: string) => Promise<unknown>;
}

/** One journal entry: a message the home sent the application, and the stream position it had consumed. */
interface JournalEntry {
  readonly sequence: number;
  readonly json: string;
  readonly consumed: number;
}

/** Journal entries read at most when taking an application over (the event log keeps fewer). */
const MAX_JOURNAL_READ = 20_000;

function parseJournal(data: Uint8Array): JournalEntry | undefined {
  try {
    const entry = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
    const { sequence, json, consumed } = entry;
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) return undefined;
    if (typeof json !== 'string' || typeof consumed !== 'number' || !Number.isSafeInteger(consumed) || consumed < 0) return undefined;
    return { sequence, json, consumed };
  } catch {
    return undefined;
  }
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
  /** The stream sequence of the last relayed event handed to the application. */
  consumed: number;
  /** Made for a connection being accepted: kept until then (performance.now()) without one. */
  readonly preparedUntil?: number;
}

/** What a member that takes an application over learnt from the journal of the one before. */
interface TakeOver {
  /** Stream position the previous home had consumed: relayed events after it are still to come. */
  readonly consumed: number;
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
  /** Applications taken over from another member's journal, until this member is their home. */
  private readonly takenOver = new Map<string, TakeOver>();
  private readonly options: AppEventsOptions;
  private scanTimer: NodeJS.Timeout | undefined;
  private stopWatching: (() => void) | undefined;
  /** Writes the entries of the applications homed here into the apps bucket (home-announcer.ts). */
  private readonly announcer: HomeAnnouncer;
  /** Applications homed elsewhere whose connection asked for the grace period (relaysFor reads them afresh). */
  private readonly resumableRelays = new Set<string>();
  /** Tags this member's relayed events with their raise order (event-order.ts). */
  private readonly relayOrder = new RelayOrder();
  /** Hands relayed events to the applications homed here in their source's order. */
  private readonly ordered: OrderedDelivery;
  /** Events published to the stream, and consumed from it (metrics, bench). */
  published = 0;
  consumed = 0;

  /** Stands in for an application connected to another member: its events go to the stream. */
  private readonly relay: ApplicationSink = {
    deliver: (application, _event, json) => {
      if (json === undefined) return; // about the connection itself (ApplicationReplaced): nothing to relay
      this.published++;
      this.publish(this.subject(application), json, application, this.relayOrder.tag(application));
    },
  };

  constructor(options: AppEventsOptions) {
    this.options = options;
    const readyHome = (name: string): boolean => this.homes.get(name)?.messages !== undefined;
    this.announcer = new HomeAnnouncer({
      apps: options.apps,
      node: options.node,
      core: options.core,
      log: options.log,
      relay: this.relay,
      readyHomes: () => [...this.homes.keys()].filter(readyHome),
      isReadyHome: readyHome,
      ...(options.releaseHeld ? { releaseHeld: options.releaseHeld } : {}),
    });
    this.ordered = new OrderedDelivery({
      node: options.node,
      groupOf: (application) => this.announcer.groupOf(application),
      deliver: (application, event) => this.handOver(application, event),
      maxHoldMs: ORDER_MAX_HOLD_MS,
      maxHeld: ORDER_MAX_HELD,
    });
  }

  async start(): Promise<void> {
    const { jsm, stream, prefix } = this.options;
    const config = { name: stream, subjects: [`${prefix}.events.>`, `${prefix}.journal.>`], max_age: STREAM_MAX_AGE_NS };
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
    // A home application's connection going or coming back changes what the other members do with
    // channels sent to it (held-calls.ts). After the current turn: a connection registers all its
    // applications in one go, and the group announced is the whole of it.
    this.options.core.applications.onAvailability((application, change) => {
      if (!this.homes.has(application)) return;
      setImmediate(() => void (change === 'connected' ? this.announcer.back(application) : this.announcer.announce(application)));
    });
    // The journal: what each home sent its applications, numbered, for the member that takes over.
    this.options.core.eventLog.onRecorded = (application, sequence, json) => {
      const home = this.homes.get(application);
      if (!home) return;
      const entry: JournalEntry = { sequence, json, consumed: home.consumed };
      this.publish(this.journalSubject(application), JSON.stringify(entry), application);
    };
  }

  /**
   * Before a connection for these applications is accepted: an application homed on another member
   * (or on one that died) is taken over with its numbering, from that member's journal, so that
   * `resumeAfter` finds the events it sent, and the relayed events it had not consumed follow.
   */
  async prepare(applications: readonly string[]): Promise<void> {
    for (const application of applications) {
      const local = this.options.core.applications.get(application);
      if (local !== undefined && local.sink !== this.relay) continue;
      if (this.homes.has(application)) continue;
      // The connection's applications are announced as one group (their events ordered together).
      this.announcer.prepared(application, applications);
      await this.takeOver(application);
      // Home before the connection is accepted: the consumer exists and the apps bucket names this
      // member, so an originate the client makes right after its connection opens, placed on
      // another member, finds the application there (relaysFor) and its events are consumed.
      await this.becomeHome(application, performance.now() + PREPARED_GRACE_MS);
    }
  }

  /**
   * Before a request from another member that names applications (originate, create, snoop,
   * external media with `app=`) runs here: a relay for each application homed elsewhere that the
   * apps bucket's watch has not brought yet, read from the bucket now.
   */
  async relaysFor(applications: readonly string[]): Promise<void> {
    const registered = this.options.core.applications;
    for (const application of applications.slice(0, MAX_APPS_LOOKED_UP)) {
      if (application === '' || application.length > 256) continue;
      // A resumable application's connection may have gone a moment ago, and an away one's come
      // back: its entry is read afresh, so that a channel sent to it waits instead of entering, or
      // enters instead of being refused (one bucket read for such requests).
      const known = registered.get(application);
      if (known !== undefined && !(known.sink === this.relay && (known.awayElsewhere || this.resumableRelays.has(application)))) continue;
      try {
        const entry = await this.options.apps.get(subjectToken(application));
        if (entry?.operation === 'PUT') this.announced(entry.key, entry.string());
      } catch (err) {
        this.options.log.warn({ err, application }, 'cluster: apps bucket not read for a forwarded request');
      }
    }
  }

  /**
   * Into the stream as a plain NATS publish: the stream stores it, in the order of this one
   * connection, without a JetStream acknowledgement per event (which cost a request and a promise
   * each and divided the event throughput); what is lost is what a dead NATS connection loses.
   */
  private publish(subject: string, text: string, application: string, headers?: MsgHdrs): void {
    try {
      this.options.nc.publish(subject, text, headers === undefined ? undefined : { headers });
    } catch (err) {
      this.options.log.warn({ err, application }, 'event not published to the cluster stream');
    }
  }

  private journalSubject(application: string): string {
    return `${this.options.prefix}.journal.${subjectToken(application)}`;
  }

  private async takeOver(application: string): Promise<void> {
    const { jsm, js, stream, core, log } = this.options;
    const subject = this.journalSubject(application);
    let last: JournalEntry | undefined;
    let lastSeq = 0;
    try {
      const stored = await jsm.streams.getMessage(stream, { last_by_subj: subject });
      if (stored) {
        last = parseJournal(stored.data);
        lastSeq = stored.seq;
      }
    } catch {
      return; // never journaled: a new application
    }
    if (!last) return;
    const entries: JournalEntry[] = [];
    const consumer = await js.consumers.get(stream, { filter_subjects: subject, deliver_policy: DeliverPolicy.All });
    const messages = await consumer.consume();
    for await (const message of messages) {
      const entry = parseJournal(message.data);
      // A member that took over before journals the same numbers again: the latest wins.
      if (entry) {
        while (entries.length > 0 && entries[entries.length - 1]!.sequence >= entry.sequence) entries.pop();
        entries.push(entry);
        if (entries.length > MAX_JOURNAL_READ) entries.shift();
      }
      if (message.seq >= lastSeq) break;
    }
    messages.stop();
    if (!core.eventLog.adopt(application, entries)) return;
    const channels = new Map<string, TrackedChannel>();
    for (const entry of entries) {
      let event: unknown;
      try {
        event = JSON.parse(entry.json);
      } catch {
        continue;
      }
      const origin = isEvent(event) && typeof event.asterisk_id === 'string' ? event.asterisk_id : '';
      // This member's own channels are told about directly, not through the relay.
      if (isEvent(event) && origin !== this.options.asteriskId) this.track(channels, origin, event);
    }
    this.takenOver.set(application, { consumed: last.consumed, channels });
    log.info({ application, lastSequence: last.sequence, consumed: last.consumed }, 'cluster: application taken over from its previous home\'s journal');
  }

  stop(): void {
    clearInterval(this.scanTimer);
    this.ordered.stop();
    this.options.core.eventLog.onRecorded = undefined;
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
        this.raiseDestroyed(application, tracked);
      }
    }
    return ended;
  }

  /** Ends the application's channels whose member is no longer alive (cause 38). */
  private endChannelsOfDead(application: string, channels: Map<string, TrackedChannel>): void {
    const live = this.options.liveAsteriskIds();
    for (const [id, tracked] of channels) {
      if (live.has(tracked.origin)) continue;
      channels.delete(id);
      this.raiseDestroyed(application, tracked);
    }
  }

  private raiseDestroyed(application: string, tracked: TrackedChannel): void {
    const destroyed: unknown = {
      type: 'ChannelDestroyed',
      timestamp: formatAriDate(),
      cause: CAUSE_NETWORK_OUT_OF_ORDER,
      cause_txt: 'Network out of order',
      channel: tracked.snapshot,
      asterisk_id: tracked.origin,
    };
    if (isEvent(destroyed)) this.options.core.applications.sendTo(application, destroyed);
  }

  private subject(application: string): string {
    return `${this.options.prefix}.events.${subjectToken(application)}`;
  }

  /**
   * Another member holds the application: a relay here, unless a connection here holds it. While
   * its connection is away from that home, the relay is a stand-in that holds the channels sent to
   * it until the home's deadline (or refuses them without one), as that home does.
   */
  private announced(key: string, value: string): void {
    const home = parseAnnouncement(key, value);
    if (home === undefined || home.node === this.options.node) return;
    const applications = this.options.core.applications;
    const local = applications.get(home.app);
    if (local?.sink !== undefined && local.sink !== this.relay) {
      this.options.log.warn({ application: home.app, node: home.node }, 'application connected to two cluster members: each gets only its own events');
      return;
    }
    this.relayOrder.announced(home.app, home.group === undefined ? undefined : { home: home.node, group: home.group });
    if (home.resumable) this.resumableRelays.add(home.app);
    else this.resumableRelays.delete(home.app);
    if (home.away) applications.standInAway(home.app, this.relay, home.heldUntil);
    else applications.register(home.app, this.relay, false);
  }

  /**
   * The application has no home any more. A stand-in holding channels keeps them until the deadline
   * it was given (a client may yet reconnect to any member); the relay itself goes.
   */
  private withdrawn(key: string): void {
    const applications = this.options.core.applications;
    const named = (name: string): boolean => subjectToken(name) === key;
    // Also for a stand-in already forgotten here (its grace ended): these tables stay bounded.
    this.relayOrder.withdrawn(named);
    for (const name of this.resumableRelays) if (named(name)) this.resumableRelays.delete(name);
    for (const app of applications.list()) {
      if (app.sink === this.relay && named(app.name)) applications.deactivate(app.name, this.relay);
    }
  }

  /** Compares the applications a connection here holds with the homes kept. */
  private scan(): void {
    const applications = this.options.core.applications;
    const now = performance.now();
    for (const app of applications.list()) {
      if (app.sink === undefined || app.sink === this.relay || this.homes.has(app.name)) continue;
      if ((this.retryAt.get(app.name) ?? 0) > now) continue;
      void this.becomeHome(app.name);
    }
    // A connection holding other applications than announced is announced anew.
    this.announcer.refreshGroups();
    for (const [name, home] of this.homes) {
      const app = applications.get(name);
      // Still home while a connection holds it or its calls wait for one (held, not relayed).
      if (app !== undefined && app.sink !== this.relay) continue;
      if ((app === undefined || app.sink === this.relay) && (home.preparedUntil ?? 0) > now) continue;
      home.messages?.stop();
      this.ordered.flush(name);
      this.homes.delete(name);
      this.announcer.forget(name);
      // Taken over by another member (its relay here): the entry is that member's now.
      if (app === undefined) this.options.apps.delete(subjectToken(name)).catch(() => undefined);
    }
  }

  /** Resolves once the apps bucket names this member (or making the home failed: logged). */
  private becomeHome(application: string, preparedUntil?: number): Promise<void> {
    const { js, stream, log } = this.options;
    const takenOver = this.takenOver.get(application);
    this.takenOver.delete(application);
    const channels = takenOver?.channels ?? new Map<string, TrackedChannel>();
    // Placeholder until the consumer is made: scan() must not start a second one.
    const pending: Home = { messages: undefined, channels, consumed: takenOver?.consumed ?? 0, ...(preparedUntil !== undefined ? { preparedUntil } : {}) };
    this.homes.set(application, pending);
    let announced: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      announced = resolve;
    });
    void (async () => {
      const start = takenOver ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: takenOver.consumed + 1 } : { deliver_policy: DeliverPolicy.New };
      const consumer = await js.consumers.get(stream, { filter_subjects: this.subject(application), ...start });
      const messages = await consumer.consume();
      if (this.homes.get(application) !== pending) {
        announced();
        return messages.stop();
      }
      const home: Home = { messages, channels, consumed: pending.consumed, ...(preparedUntil !== undefined ? { preparedUntil } : {}) };
      this.homes.set(application, home);
      await this.announcer.announce(application, true);
      announced();
      log.info({ application, takenOver: takenOver !== undefined }, 'cluster: this member is the application\'s home');
      // The channels of members that died before this one took over end now.
      if (takenOver) this.endChannelsOfDead(application, channels);
      for await (const message of messages) {
        this.ordered.offer(application, { data: message.data, seq: message.seq, tag: parseOrderTag(message.headers?.get(ORDER_HEADER)) });
      }
    })().catch((err: unknown) => {
      log.error({ err, application }, 'cluster: cannot consume the application\'s events from the stream; trying again in 5 s');
      this.retryAt.set(application, performance.now() + RETRY_MS);
      if (this.homes.get(application) === pending) this.homes.delete(application);
      announced();
    });
    return ready;
  }

  /** A relayed event's turn has come (event-order.ts): its stream position is now the one consumed. */
  private handOver(application: string, event: Relayed): void {
    const home = this.homes.get(application);
    if (home === undefined) return;
    home.consumed = event.seq;
    this.received(application, home.channels, event.data);
  }

  private received(application: string, channels: Map<string, TrackedChannel>, data: Uint8Array): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(data).toString('utf8'));
    } catch {
      return;
    }
    if (!isEvent(parsed)) return;
    // Everything on the subject came through a relay, so the application has not had it: this
    // member's own events too, relayed before it became the home (a takeover consumes them).
    const origin = typeof parsed.asterisk_id === 'string' ? parsed.asterisk_id : '';
    this.consumed++;
    // The home numbers it anew; asterisk_id stays the owning member's.
    const { application: _application, sequence: _sequence, ...event } = parsed;
    // This member's own channels it hears of directly from now on: only the others' are tracked.
    if (origin !== this.options.asteriskId) this.track(channels, origin, event);
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
