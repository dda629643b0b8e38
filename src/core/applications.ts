// Stasis applications: registration by event connections, reference-counted subscriptions to
// event sources, event filters, and the event router that delivers each core event to the
// applications that control or subscribe to the objects it concerns.
import { InvalidError, NotFoundError, UnavailableError, UnprocessableError } from './errors.ts';
import type { ApplicationSink, EventTextSource } from './application-sink.ts';
import { emptySharedText, type EventLog, type SharedText } from './event-log.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { CoreEvent } from '../spec/events.ts';

export type SourceKind = 'channel' | 'bridge' | 'endpoint' | 'deviceState';
const SOURCE_KINDS: readonly SourceKind[] = ['channel', 'bridge', 'endpoint', 'deviceState'];

/**
 * A core event: one of the declared ARI events, with `type` and `timestamp` and its own fields
 * (typed from the declarations in src/spec); the interface layer adds `application` and `asterisk_id`.
 */
export type { CoreEvent };
/** Re-exported for the event connections, which register with the router as sinks. */
export type { ApplicationSink };

/** The objects an event concerns; applications subscribed to any of them receive it. */
export interface EventScope {
  readonly channelIds?: readonly string[];
  readonly bridgeIds?: readonly string[];
  /** `TECH/resource` ids; technology-level subscribers (`endpoint:TECH`) match by prefix. */
  readonly endpointIds?: readonly string[];
  readonly deviceNames?: readonly string[];
  /** Applications that receive the event whatever their subscriptions. */
  readonly applications?: readonly string[];
  /**
   * Exactly these applications and no other, whatever the fields above and their subscriptions
   * say (an event some applications already had from elsewhere, raised for the ones that missed it).
   */
  readonly only?: readonly string[];
}

/** How a registration behaves once its connection is gone. */
export interface RegisterOptions {
  /** Channels sent to the application wait for it for the reconnect grace period. */
  readonly holdCalls?: boolean;
}

/**
 * Told when an application becomes available again, when its connection goes away (`away`: its
 * calls may be held from then on), or when the wait for it ends.
 */
export type AvailabilityListener = (application: string, change: 'connected' | 'away' | 'hold-ended') => void;

/** Told of every event the core publishes (Applications.observe). */
export type EventObserver = (event: CoreEvent) => void;

/** Tells whether an object named in an event source exists. */
export type ObjectExists = (kind: Exclude<SourceKind, 'deviceState'>, id: string) => boolean;

export interface EventTypeFilter {
  readonly type: string;
}

export interface ApplicationSnapshot {
  readonly name: string;
  /** Present only while no connection holds the application (an added field). */
  readonly connected?: false;
  readonly disconnected_since?: string;
  /** Until when channels sent to it wait (while its resumable connection is away). */
  readonly calls_held_until?: string;
  readonly channel_ids: string[];
  readonly bridge_ids: string[];
  readonly endpoint_ids: string[];
  readonly device_names: string[];
  readonly events_allowed: EventTypeFilter[];
  readonly events_disallowed: EventTypeFilter[];
}

/** The empty id: a subscription to every object of the kind. */
const ALL = '';

export class Application {
  readonly name: string;
  sink: ApplicationSink | undefined;
  subscribeAll = false;
  allowed: EventTypeFilter[] = [];
  disallowed: EventTypeFilter[] = [];
  /** The last registration asked that calls wait for it while it is away. */
  holdCalls = false;
  /** When its connection went away (undefined while connected). */
  disconnectedAt: Date | undefined;
  /** While calls wait for it: the end of the grace period (ms since the epoch) and its timer. */
  holdUntil: number | undefined;
  holdTimer: NodeJS.Timeout | undefined;
  /**
   * The sink stands in for a connection that is away on another server (a cluster member's relay,
   * see `standInAway`): events still go to the sink, but channels are not entered into it.
   */
  awayElsewhere = false;
  private readonly subscriptions: Record<SourceKind, Map<string, number>> = {
    channel: new Map(),
    bridge: new Map(),
    endpoint: new Map(),
    deviceState: new Map(),
  };

  constructor(name: string) {
    this.name = name;
  }

  get active(): boolean {
    return this.sink !== undefined && !this.awayElsewhere;
  }

  /** Disconnected, but channels sent to it wait for it to come back. */
  get held(): boolean {
    return this.holdUntil !== undefined;
  }

  hasSubscriptions(): boolean {
    return SOURCE_KINDS.some((kind) => this.subscriptions[kind].size > 0);
  }

  isSubscribed(kind: SourceKind, id: string): boolean {
    return this.subscriptions[kind].has(id);
  }

  addSubscription(kind: SourceKind, id: string): void {
    const counts = this.subscriptions[kind];
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }

  /** Drops one reference; returns false when the source was not subscribed. */
  removeSubscription(kind: SourceKind, id: string): boolean {
    const counts = this.subscriptions[kind];
    const count = counts.get(id);
    if (count === undefined) return false;
    if (count <= 1) counts.delete(id);
    else counts.set(id, count - 1);
    return true;
  }

  /** Removes every reference to an object that no longer exists. */
  forget(kind: SourceKind, id: string): void {
    this.subscriptions[kind].delete(id);
  }

  /** Receives every event (or every event of a kind): subscribeAll, or a subscription to all channels, bridges or endpoints. */
  get wide(): boolean {
    return this.subscribeAll || this.subscriptions.channel.has(ALL) || this.subscriptions.bridge.has(ALL) || this.subscriptions.endpoint.has(ALL);
  }

  wants(scope: EventScope): boolean {
    if (scope.only) return scope.only.includes(this.name);
    if (this.subscribeAll) return true;
    if (scope.applications?.includes(this.name)) return true;
    if (matches(this.subscriptions.channel, scope.channelIds)) return true;
    if (matches(this.subscriptions.bridge, scope.bridgeIds)) return true;
    if (matches(this.subscriptions.deviceState, scope.deviceNames)) return true;
    const endpoints = this.subscriptions.endpoint;
    if (endpoints.size > 0 && scope.endpointIds) {
      if (endpoints.has(ALL) && scope.endpointIds.length > 0) return true;
      for (const id of scope.endpointIds) {
        if (endpoints.has(id)) return true;
        const slash = id.indexOf('/');
        if (slash > 0 && endpoints.has(id.slice(0, slash))) return true;
      }
    }
    return false;
  }

  passesFilter(type: string): boolean {
    // Asked for every event and application: plain loops, where `some` made a closure per call.
    if (this.disallowed.length > 0 && listsType(this.disallowed, type)) return false;
    return this.allowed.length === 0 || listsType(this.allowed, type);
  }

  snapshot(): ApplicationSnapshot {
    const ids = (kind: SourceKind): string[] => [...this.subscriptions[kind].keys()].filter((id) => id !== ALL);
    const snapshot: ApplicationSnapshot = {
      name: this.name,
      channel_ids: ids('channel'),
      bridge_ids: ids('bridge'),
      endpoint_ids: ids('endpoint'),
      device_names: ids('deviceState'),
      events_allowed: this.allowed.map((entry) => ({ ...entry })),
      events_disallowed: this.disallowed.map((entry) => ({ ...entry })),
    };
    // A connected application looks exactly as in Asterisk; the state appears only while it is away.
    if (this.active) return snapshot;
    return {
      ...snapshot,
      connected: false,
      ...(this.disconnectedAt ? { disconnected_since: formatAriDate(this.disconnectedAt) } : {}),
      ...(this.holdUntil !== undefined ? { calls_held_until: formatAriDate(new Date(this.holdUntil)) } : {}),
    };
  }
}

function matches(subscribed: ReadonlyMap<string, number>, ids: readonly string[] | undefined): boolean {
  if (subscribed.size === 0 || !ids || ids.length === 0) return false;
  if (subscribed.has(ALL)) return true;
  return ids.some((id) => subscribed.has(id));
}

export interface ParsedSource {
  readonly kind: SourceKind;
  readonly id: string;
}

/** Parses `channel:<id>`, `bridge:<id>`, `endpoint:<tech>[/<resource>]`, `deviceState:<name>`. */
export function parseEventSource(source: string): ParsedSource {
  const colon = source.indexOf(':');
  const scheme = colon < 0 ? source : source.slice(0, colon);
  const kind = SOURCE_KINDS.find((candidate) => candidate === scheme);
  if (colon < 0 || !kind) {
    throw new InvalidError(`Invalid event source URI scheme: ${source} (use channel:, bridge:, endpoint: or deviceState:)`);
  }
  return { kind, id: source.slice(colon + 1) };
}

export class Applications {
  private readonly apps = new Map<string, Application>();
  private readonly objectExists: ObjectExists;
  private readonly availabilityListeners: AvailabilityListener[] = [];
  private readonly observers: EventObserver[] = [];
  /** Numbers and keeps every event delivered (see event-log.ts); without it events go out unnumbered. */
  eventLog: EventLog | undefined;
  /** How long calls wait for an application whose holding connection went away; 0 = not at all. */
  reconnectGraceMs = 0;
  /** Most applications receiving every event (`ari.max_subscribe_all_apps`); 0 = unlimited. */
  maxWideApps = 0;

  constructor(objectExists: ObjectExists) {
    this.objectExists = objectExists;
  }

  get(name: string): Application | undefined {
    return this.apps.get(name);
  }

  require(name: string): Application {
    const app = this.apps.get(name);
    if (!app) throw new NotFoundError(`Application not found: ${name}`);
    return app;
  }

  list(): Application[] {
    return [...this.apps.values()];
  }

  isActive(name: string): boolean {
    return this.apps.get(name)?.active ?? false;
  }

  /** The application is away, and channels sent to it wait for it. */
  isHeld(name: string): boolean {
    return this.apps.get(name)?.held ?? false;
  }

  onAvailability(listener: AvailabilityListener): void {
    this.availabilityListeners.push(listener);
  }

  /**
   * Throws UnavailableError when making the `names` applications receive every event would go
   * beyond `maxWideApps`: each such application costs a copy of every event the server raises.
   */
  checkWide(names: readonly string[]): void {
    if (this.maxWideApps <= 0) return;
    const adding = new Set(names.filter((name) => !this.apps.get(name)?.wide));
    if (adding.size === 0) return;
    let wide = 0;
    for (const app of this.apps.values()) if (app.wide) wide++;
    if (wide + adding.size > this.maxWideApps) {
      throw new UnavailableError(`At most ${this.maxWideApps} applications may receive every event (ari.max_subscribe_all_apps)`);
    }
  }

  /** Gives the application to `sink`; a previous connection holding it is told ApplicationReplaced. */
  register(name: string, sink: ApplicationSink, subscribeAll: boolean, options: RegisterOptions = {}): Application {
    let app = this.apps.get(name);
    if (!app) {
      app = new Application(name);
      this.apps.set(name, app);
    }
    const previous = app.sink;
    // About the old connection, not the application's stream: neither numbered nor kept.
    if (previous && previous !== sink && app.passesFilter('ApplicationReplaced')) previous.deliver(name, { type: 'ApplicationReplaced', timestamp: formatAriDate() });
    app.sink = sink;
    app.subscribeAll = subscribeAll;
    app.holdCalls = options.holdCalls ?? false;
    app.disconnectedAt = undefined;
    app.awayElsewhere = false;
    const wasHeld = app.held;
    this.endHold(app);
    if (wasHeld || !previous) this.notify(name, 'connected');
    return app;
  }

  /** The connection that held the application went away. */
  deactivate(name: string, sink: ApplicationSink): void {
    const app = this.apps.get(name);
    if (!app || app.sink !== sink) return;
    app.sink = undefined;
    app.subscribeAll = false;
    app.disconnectedAt ??= new Date();
    app.awayElsewhere = false;
    if (app.holdCalls && this.reconnectGraceMs > 0) this.holdUntilTime(app, Date.now() + this.reconnectGraceMs);
    this.notify(name, 'away');
    this.removeIfUnused(app);
  }

  /**
   * `sink` stands in for the application, whose connection is away on another server (a cluster
   * member whose application's resumable connection dropped): its events still go to `sink`, but
   * channels sent to it wait as for a held application until `holdUntil` (ms since the epoch,
   * decided by that server), or are refused without one. `register` ends it (the application is
   * back: waiting channels enter), as does the deadline.
   */
  standInAway(name: string, sink: ApplicationSink, holdUntil: number | undefined): void {
    let app = this.apps.get(name);
    if (!app) {
      app = new Application(name);
      this.apps.set(name, app);
    }
    app.sink = sink;
    app.subscribeAll = false;
    app.holdCalls = false;
    app.awayElsewhere = true;
    app.disconnectedAt ??= new Date();
    if (holdUntil !== undefined && holdUntil > Date.now()) {
      if (app.holdUntil !== holdUntil) {
        this.endHold(app);
        this.holdUntilTime(app, holdUntil);
      }
      return;
    }
    if (app.held) this.holdExpired(app);
    else this.removeIfUnused(app);
  }

  private holdUntilTime(app: Application, until: number): void {
    app.holdUntil = until;
    app.holdTimer = setTimeout(() => this.holdExpired(app), Math.max(0, until - Date.now()));
    app.holdTimer.unref();
  }

  private holdExpired(app: Application): void {
    this.endHold(app);
    this.notify(app.name, 'hold-ended');
    if (this.apps.get(app.name) === app) this.removeIfUnused(app);
  }

  private endHold(app: Application): void {
    if (app.holdTimer) clearTimeout(app.holdTimer);
    app.holdTimer = undefined;
    app.holdUntil = undefined;
  }

  private notify(name: string, change: 'connected' | 'away' | 'hold-ended'): void {
    for (const listener of this.availabilityListeners) listener(name, change);
  }

  /** An application nobody holds, nobody waits for and that is subscribed to nothing is forgotten. */
  private removeIfUnused(app: Application): void {
    if (!app.active && !app.held && !app.hasSubscriptions()) this.apps.delete(app.name);
  }

  /** Ends every wait (server shutdown). */
  close(): void {
    for (const app of this.apps.values()) this.endHold(app);
  }

  subscribe(name: string, sources: readonly string[]): Application {
    const app = this.require(name);
    const parsed = sources.map(parseEventSource);
    for (const source of parsed) {
      if (!this.sourceExists(source)) throw new UnprocessableError(`Event source does not exist: ${source.kind}:${source.id}`);
    }
    if (parsed.some((source) => source.id === ALL && source.kind !== 'deviceState')) this.checkWide([name]);
    for (const source of parsed) app.addSubscription(source.kind, source.id);
    return app;
  }

  unsubscribe(name: string, sources: readonly string[]): Application {
    const app = this.require(name);
    const parsed = sources.map(parseEventSource);
    for (const source of parsed) {
      if (!app.isSubscribed(source.kind, source.id)) {
        throw new UnprocessableError(`Application is not subscribed to event source ${source.kind}:${source.id}`);
      }
    }
    for (const source of parsed) app.removeSubscription(source.kind, source.id);
    this.removeIfUnused(app);
    return app;
  }

  /** Subscribes an application to an object on its behalf (a channel entering it, for instance). */
  subscribeInternal(name: string, kind: SourceKind, id: string): void {
    this.apps.get(name)?.addSubscription(kind, id);
  }

  /** Drops one reference subscribeInternal took (a channel leaving the application it entered). */
  unsubscribeInternal(name: string, kind: SourceKind, id: string): void {
    const app = this.apps.get(name);
    if (!app) return;
    app.removeSubscription(kind, id);
    this.removeIfUnused(app);
  }

  /** An object is gone: no application keeps a subscription to it. */
  forgetObject(kind: SourceKind, id: string): void {
    for (const app of this.apps.values()) {
      app.forget(kind, id);
      this.removeIfUnused(app);
    }
  }

  setFilter(name: string, filter: { allowed?: unknown; disallowed?: unknown } | undefined): Application {
    const app = this.require(name);
    const allowed = filter?.allowed === undefined ? undefined : parseFilterList('allowed', filter.allowed);
    const disallowed = filter?.disallowed === undefined ? undefined : parseFilterList('disallowed', filter.disallowed);
    if (!filter || (filter.allowed === undefined && filter.disallowed === undefined)) {
      app.allowed = [];
      app.disallowed = [];
    } else {
      if (allowed) app.allowed = allowed;
      if (disallowed) app.disallowed = disallowed;
    }
    return app;
  }

  /**
   * Routes an event to every application that wants it. With an event log, an application whose
   * connection is away still has the event numbered and kept, for the client that resumes.
   */
  publish(event: CoreEvent, scope: EventScope, text?: EventTextSource): void {
    // Observers inside the server (call records) see every event first, whoever subscribes.
    for (const observer of this.observers) {
      try {
        observer(event);
      } catch (error) {
        this.onObserverError(error, event);
      }
    }
    // One serialisation of the event for all its applications; each only adds its own fields.
    // The holder of that text is reused from event to event (no object per event); a publish
    // from inside a delivery (a sink reacting at once) takes a fresh one so as not to clobber it.
    const outermost = !this.publishing;
    const shared: SharedText = outermost ? this.sharedText : emptySharedText();
    shared.text = undefined;
    shared.tail = '';
    shared.bytes = undefined;
    shared.source = text;
    this.publishing = true;
    try {
      for (const app of this.apps.values()) {
        if ((app.sink || this.eventLog) && app.wants(scope)) this.deliverTo(app, event, shared);
      }
    } finally {
      if (outermost) {
        this.publishing = false;
        // The text is not held past its event.
        shared.text = undefined;
        shared.tail = '';
        shared.bytes = undefined;
        shared.source = undefined;
        shared.split!.head = shared.split!.tail = '';
      }
    }
  }

  /** The serialised text of the event being published, shared by its applications (see publish). */
  private readonly sharedText: SharedText = emptySharedText();
  private publishing = false;

  /**
   * Adds a listener told of every event the core publishes, before any application gets it, whatever
   * the subscriptions: the core's own records (CDR, CEL) are built from the events, as Asterisk's
   * are from its Stasis messages. A listener must be quick and must not raise events itself.
   */
  observe(observer: EventObserver): () => void {
    this.observers.push(observer);
    return () => {
      const index = this.observers.indexOf(observer);
      if (index >= 0) this.observers.splice(index, 1);
    };
  }

  /** Told when an observer throws (the event still goes to the applications). */
  onObserverError: (error: unknown, event: CoreEvent) => void = () => undefined;

  /** Sends an event to one application only, ignoring subscriptions. */
  sendTo(name: string, event: CoreEvent, text?: EventTextSource): void {
    const app = this.apps.get(name);
    if (app && (app.sink || this.eventLog)) this.deliverTo(app, event, text ? emptySharedText(text) : undefined);
  }

  private deliverTo(app: Application, event: CoreEvent, shared?: SharedText): void {
    if (!app.passesFilter(event.type)) return;
    if (!this.eventLog) return app.sink?.deliver(app.name, event);
    this.eventLog.deliver(app.name, event, app.sink, shared);
  }

  private sourceExists(source: ParsedSource): boolean {
    if (source.id === ALL || source.kind === 'deviceState') return true;
    return this.objectExists(source.kind, source.id);
  }
}

/** Whether a filter list names the event type. */
function listsType(entries: readonly EventTypeFilter[], type: string): boolean {
  for (let i = 0; i < entries.length; i++) if (entries[i]!.type === type) return true;
  return false;
}

function parseFilterList(key: string, value: unknown): EventTypeFilter[] {
  if (!Array.isArray(value)) throw new InvalidError(`Invalid event filter: ${key} must be a list`);
  return value.map((entry) => {
    if (entry === null || typeof entry !== 'object' || typeof (entry as { type?: unknown }).type !== 'string') {
      throw new InvalidError(`Invalid event filter: every ${key} entry needs a string "type"`);
    }
    return { type: (entry as { type: string }).type };
  });
}

