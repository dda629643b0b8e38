// Stasis applications: registration by event connections, reference-counted subscriptions to
// event sources, event filters, and the event router that delivers each core event to the
// applications that control or subscribe to the objects it concerns.
import { InvalidError, NotFoundError, UnprocessableError } from './errors.ts';
import { formatAriDate } from './time.ts';
import type { CoreEvent } from '../spec/events.ts';

export type SourceKind = 'channel' | 'bridge' | 'endpoint' | 'deviceState';
const SOURCE_KINDS: readonly SourceKind[] = ['channel', 'bridge', 'endpoint', 'deviceState'];

/**
 * A core event: one of the declared ARI events, with `type` and `timestamp` and its own fields
 * (typed from the declarations in src/spec); the interface layer adds `application` and `asterisk_id`.
 */
export type { CoreEvent };

/** The objects an event concerns; applications subscribed to any of them receive it. */
export interface EventScope {
  readonly channelIds?: readonly string[];
  readonly bridgeIds?: readonly string[];
  /** `TECH/resource` ids; technology-level subscribers (`endpoint:TECH`) match by prefix. */
  readonly endpointIds?: readonly string[];
  readonly deviceNames?: readonly string[];
  /** Applications that receive the event whatever their subscriptions. */
  readonly applications?: readonly string[];
}

/** Where an application's events go: an event connection of the interface layer. */
export interface ApplicationSink {
  deliver(application: string, event: CoreEvent): void;
}

/** Tells whether an object named in an event source exists. */
export type ObjectExists = (kind: Exclude<SourceKind, 'deviceState'>, id: string) => boolean;

export interface EventTypeFilter {
  readonly type: string;
}

export interface ApplicationSnapshot {
  readonly name: string;
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
    return this.sink !== undefined;
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

  wants(scope: EventScope): boolean {
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
    if (this.disallowed.some((entry) => entry.type === type)) return false;
    return this.allowed.length === 0 || this.allowed.some((entry) => entry.type === type);
  }

  snapshot(): ApplicationSnapshot {
    const ids = (kind: SourceKind): string[] => [...this.subscriptions[kind].keys()].filter((id) => id !== ALL);
    return {
      name: this.name,
      channel_ids: ids('channel'),
      bridge_ids: ids('bridge'),
      endpoint_ids: ids('endpoint'),
      device_names: ids('deviceState'),
      events_allowed: this.allowed.map((entry) => ({ ...entry })),
      events_disallowed: this.disallowed.map((entry) => ({ ...entry })),
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

  /** Gives the application to `sink`; a previous connection holding it is told ApplicationReplaced. */
  register(name: string, sink: ApplicationSink, subscribeAll: boolean): Application {
    let app = this.apps.get(name);
    if (!app) {
      app = new Application(name);
      this.apps.set(name, app);
    }
    const previous = app.sink;
    if (previous && previous !== sink) this.deliverTo(app, previous, { type: 'ApplicationReplaced', timestamp: formatAriDate() });
    app.sink = sink;
    app.subscribeAll = subscribeAll;
    return app;
  }

  /** The connection that held the application went away. */
  deactivate(name: string, sink: ApplicationSink): void {
    const app = this.apps.get(name);
    if (!app || app.sink !== sink) return;
    app.sink = undefined;
    app.subscribeAll = false;
    if (!app.hasSubscriptions()) this.apps.delete(name);
  }

  subscribe(name: string, sources: readonly string[]): Application {
    const app = this.require(name);
    const parsed = sources.map(parseEventSource);
    for (const source of parsed) {
      if (!this.sourceExists(source)) throw new UnprocessableError(`Event source does not exist: ${source.kind}:${source.id}`);
    }
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
    if (!app.active && !app.hasSubscriptions()) this.apps.delete(name);
    return app;
  }

  /** Subscribes an application to an object on its behalf (a channel entering it, for instance). */
  subscribeInternal(name: string, kind: SourceKind, id: string): void {
    this.apps.get(name)?.addSubscription(kind, id);
  }

  /** An object is gone: no application keeps a subscription to it. */
  forgetObject(kind: SourceKind, id: string): void {
    for (const app of this.apps.values()) {
      app.forget(kind, id);
      if (!app.active && !app.hasSubscriptions()) this.apps.delete(app.name);
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

  /** Routes an event to every active application that wants it. */
  publish(event: CoreEvent, scope: EventScope): void {
    for (const app of this.apps.values()) {
      if (app.sink && app.wants(scope)) this.deliverTo(app, app.sink, event);
    }
  }

  /** Sends an event to one application only (if active), ignoring subscriptions. */
  sendTo(name: string, event: CoreEvent): void {
    const app = this.apps.get(name);
    if (app?.sink) this.deliverTo(app, app.sink, event);
  }

  private deliverTo(app: Application, sink: ApplicationSink, event: CoreEvent): void {
    if (app.passesFilter(event.type)) sink.deliver(app.name, event);
  }

  private sourceExists(source: ParsedSource): boolean {
    if (source.id === ALL || source.kind === 'deviceState') return true;
    return this.objectExists(source.kind, source.id);
  }
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

