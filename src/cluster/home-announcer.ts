// What a home writes of its applications into the apps bucket (app-announcement.ts), kept apart
// from the event flow (app-events.ts): the member holding each, the applications sharing its
// connection (whose relayed events are ordered together, event-order.ts), and, while the connection
// is away, until when the other members hold the calls sent to it (held-calls.ts). An entry is
// written again only when it changes; when the application comes back after its calls were held,
// the other members' waiting channels are let in in arrival order before the entry says it is back.
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import type { ApplicationSink } from '../core/application-sink.ts';
import { formatAnnouncement, parseAnnouncement } from './app-announcement.ts';
import { MAX_ORDERED_GROUP } from './event-order.ts';
import { subjectToken } from './wire.ts';

export interface HomeAnnouncerOptions {
  readonly apps: KV;
  readonly node: string;
  readonly core: Core;
  readonly log: Logger;
  /** The relay registered for applications homed elsewhere (never a connection of this member). */
  readonly relay: ApplicationSink;
  /** The applications homed here whose stream consumer exists (an entry before it would lose events). */
  readonly readyHomes: () => Iterable<string>;
  readonly isReadyHome: (application: string) => boolean;
  /** Lets the channels waiting on the other members in, in arrival order (held-calls.ts). */
  readonly releaseHeld?: (application: string) => Promise<unknown>;
}

export class HomeAnnouncer {
  /** The entry last written for each application homed here. */
  private readonly written = new Map<string, string>();
  /** The applications sharing each home application's connection, as last announced. */
  private readonly groups = new Map<string, readonly string[]>();
  /** Home applications whose held calls on other members are being let in (their entry waits). */
  private readonly releasing = new Set<string>();

  constructor(private readonly options: HomeAnnouncerOptions) {}

  /** The group last announced for the application (empty: not ordered with others). */
  groupOf(application: string): readonly string[] {
    return this.groups.get(application) ?? [];
  }

  /** The connection about to be accepted holds the application with these (before its home is made). */
  prepared(application: string, connection: readonly string[]): void {
    this.groups.set(application, connection.length <= MAX_ORDERED_GROUP ? [...connection] : []);
  }

  /** The application is no longer homed here. */
  forget(application: string): void {
    this.written.delete(application);
    this.groups.delete(application);
  }

  /**
   * Writes the application's entry when it changed: its group, whether its connection is away and
   * until when its calls wait, whether it is resumable. `takingOver`: this member is becoming its
   * home, its relay standing in until the connection is accepted.
   */
  async announce(application: string, takingOver = false): Promise<void> {
    if (!this.options.isReadyHome(application) || this.releasing.has(application)) return;
    const app = this.options.core.applications.get(application);
    // Another member took it over: its entry is that member's to write. Gone here (its grace ended,
    // nothing left in it): the scan withdraws the entry; written now it would read as connected.
    if ((app === undefined || app.sink === this.options.relay) && !takingOver) return;
    const group = this.currentGroup(application);
    this.groups.set(application, group);
    const away = app !== undefined && app.sink === undefined && app.disconnectedAt !== undefined;
    const text = formatAnnouncement({ node: this.options.node, app: application, group, away, ...(app?.holdUntil !== undefined ? { heldUntil: app.holdUntil } : {}), resumable: app?.holdCalls === true });
    if (this.written.get(application) === text) return;
    this.written.set(application, text);
    try {
      await this.options.apps.put(subjectToken(application), text);
    } catch (err) {
      this.written.delete(application);
      this.options.log.warn({ err, application }, 'cluster: the application\'s entry was not written to the apps bucket');
    }
  }

  /** The application is back on its connection here: held calls elsewhere enter in order, then the entry says so. */
  async back(application: string): Promise<void> {
    const previous = this.written.get(application);
    const wasHeld = previous !== undefined && parseAnnouncement(subjectToken(application), previous)?.heldUntil !== undefined;
    const app = this.options.core.applications.get(application);
    const { releaseHeld, relay, log } = this.options;
    if (wasHeld && app?.active === true && app.sink !== relay && releaseHeld && !this.releasing.has(application)) {
      this.releasing.add(application);
      try {
        await releaseHeld(application);
      } catch (err) {
        log.warn({ err, application }, 'cluster: the calls held on other members were not let in in order');
      } finally {
        this.releasing.delete(application);
      }
    }
    await this.announce(application);
  }

  /** Announces anew each home application whose connection holds other applications than announced. */
  refreshGroups(): void {
    const connections = this.connectionsOfHomes();
    for (const application of this.options.readyHomes()) {
      const sink = this.options.core.applications.get(application)?.sink;
      const group = sink === undefined ? undefined : connections.get(sink);
      if (group !== undefined && group.join('\n') !== this.groupOf(application).join('\n')) void this.announce(application);
    }
  }

  /** The applications of the connection holding the application here (all homed here), or the group last known. */
  private currentGroup(application: string): readonly string[] {
    const sink = this.options.core.applications.get(application)?.sink;
    if (sink === undefined || sink === this.options.relay) return this.groups.get(application) ?? [application];
    return this.connectionsOfHomes().get(sink) ?? [application];
  }

  /** Each connection here holding home applications, with those applications (past the group bound: none). */
  private connectionsOfHomes(): Map<ApplicationSink, readonly string[]> {
    const bySink = new Map<ApplicationSink, string[]>();
    for (const name of this.options.readyHomes()) {
      const sink = this.options.core.applications.get(name)?.sink;
      if (sink === undefined || sink === this.options.relay) continue;
      const group = bySink.get(sink);
      if (group) group.push(name);
      else bySink.set(sink, [name]);
    }
    const groups = new Map<ApplicationSink, readonly string[]>();
    for (const [sink, names] of bySink) groups.set(sink, names.length > MAX_ORDERED_GROUP ? [] : names);
    return groups;
  }
}
