// What ARI shows of a channel: its identity, the fields its snapshot carries, and that snapshot
// kept between changes. Every field a snapshot shows is written through an accessor here, and
// each write tells the kept snapshot (kept-snapshot.ts) that the next one must be built anew; a
// write that bypassed them would leave events carrying a stale snapshot. The Channel extends this
// so its callers keep reading and writing `channel.state`, `channel.caller`... as before.
import type { Model } from '../../spec/index.ts';
import type { CoreEvent } from '../../spec/events.ts';
import { TypedEmitter } from '../../util/typed-emitter.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { VariableStore } from './variable-store.ts';
import { KeptSnapshot } from './kept-snapshot.ts';
import type { SplitEventText } from '../application-sink.ts';
import { NOT_REDIRECTED, type Redirecting } from './redirecting.ts';
import { PRESENTATION_ALLOWED, type PartyPresentation } from './presentation.ts';
import type { CallerId, ChannelIdentity, ChannelInit, ChannelInternalEvents, ChannelState, DialplanLocation, IdentityChange } from './channel-types.ts';

/** The caller id and connected line of a channel that has none: shared, as they are replaced, never changed in place (not frozen: a frozen object has a shape of its own, and every snapshot and event reads these). */
const NO_PARTY: Readonly<CallerId> = { name: '', number: '' };

const CALLER_CHANGED: IdentityChange = { caller: true, connected: false };
const CONNECTED_CHANGED: IdentityChange = { caller: false, connected: true };

/** What the snapshot needs from the channel's table. */
interface SnapshotSettings {
  /** Variables every snapshot carries (the `channelvars` setting). */
  readonly channelvars: readonly string[];
  readonly defaultLanguage: string;
}

export abstract class ChannelSnapshotFields extends TypedEmitter<ChannelInternalEvents> {
  readonly id: string;
  readonly name: string;
  readonly technology: string;
  readonly endpointResource: string | undefined;
  readonly direction: 'inbound' | 'outbound';
  /** When the channel was made (ms since the epoch): a number, not a Date held for the channel's life. */
  readonly #createdAt = Date.now();
  /** creationtime as ARI writes it, once: each event's snapshot carries it (a Local pair's halves missed formatAriDate's one entry). */
  #creationText: string | undefined;
  readonly linkedId: string;
  #protocolId: string;
  #state: ChannelState;
  #caller: Readonly<CallerId>;
  #connected: Readonly<CallerId> = NO_PARTY;
  /**
   * The caller's and the connected party's presentation (presentation.ts: name and number packed
   * in one number, 0 = allowed). Plain numbers, so a channel whose parties are shown holds no
   * object for them; no snapshot shows them (ARI's ChannelCallerId carries the caller's), and as in
   * Asterisk a change of presentation alone raises no event.
   */
  callerPresentation: PartyPresentation;
  connectedPresentation: PartyPresentation = PRESENTATION_ALLOWED;
  #redirecting: Redirecting = NOT_REDIRECTED;
  #accountcode = '';
  #language: string;
  #location: Readonly<DialplanLocation>;
  /**
   * The snapshot's `dialplan` object for the location it was made from: the location is replaced,
   * never changed in place, so snapshots taken while it stays (a state change, a variable) share it.
   */
  #dialplanShown: Model<'Channel'>['dialplan'] | undefined;
  #dialplanShownOf: Readonly<DialplanLocation> | undefined;
  /** The snapshot while nothing it shows changes, and its text once an event needed it. */
  readonly #kept = new KeptSnapshot();
  readonly #settings: SnapshotSettings;
  /** The channel's variables: `channelvars` are shown from them. */
  protected readonly variables = new VariableStore();
  /**
   * Variables set with reportEvents: every snapshot shows them beside `channelvars`. Made at the
   * first such variable: most channels never have one, and an empty Set per channel outlived the
   * young generation with the call (docs/performance.md, eighth pass).
   */
  #reportedVariables: Set<string> | undefined;
  /** A `channelvars` function is being read (a read that raised an event must not read it again). */
  #readingReportedFunction = false;

  protected constructor(settings: SnapshotSettings, init: ChannelInit) {
    super();
    this.#settings = settings;
    this.id = init.id;
    this.name = init.name;
    this.technology = init.technology;
    this.endpointResource = init.endpointResource;
    this.direction = init.direction;
    this.#state = init.state;
    this.linkedId = init.linkedId ?? init.id;
    this.#language = init.language ?? settings.defaultLanguage;
    this.#caller = init.caller === undefined ? NO_PARTY : { ...init.caller };
    this.callerPresentation = init.callerPresentation ?? PRESENTATION_ALLOWED;
    this.#protocolId = init.protocolId ?? '';
    this.#accountcode = init.accountcode ?? '';
    this.#location = { context: 'default', exten: 's', priority: 1, appName: '', appData: '', ...init.location };
  }

  /** When the channel was made. */
  get creationtime(): Date {
    return new Date(this.#createdAt);
  }

  /** Reads dialplan function `name` on the channel (a `channelvars` entry such as `CHANNEL(language)`). */
  protected abstract readFunction(name: string, args: string): string | undefined;

  /** Something a snapshot shows changed without an accessor here (a variable): the next snapshot is built anew. */
  protected snapshotChanged(): void {
    this.#kept.changed();
  }

  get protocolId(): string {
    return this.#protocolId;
  }

  set protocolId(value: string) {
    this.#protocolId = value;
    this.#kept.changed();
  }

  get state(): ChannelState {
    return this.#state;
  }

  set state(value: ChannelState) {
    this.#state = value;
    this.#kept.changed();
  }

  /** Replaced, never changed in place (Readonly): a write is what makes the next snapshot new. */
  get caller(): Readonly<CallerId> {
    return this.#caller;
  }

  set caller(value: Readonly<CallerId>) {
    this.#caller = value;
    this.#kept.changed();
  }

  get connected(): Readonly<CallerId> {
    return this.#connected;
  }

  set connected(value: Readonly<CallerId>) {
    this.#connected = value;
    this.#kept.changed();
  }

  /**
   * The redirecting party (redirecting.ts), replaced as a whole: its `from` number is the
   * snapshot's caller_rdnis, as Asterisk's snapshot takes it.
   */
  get redirecting(): Redirecting {
    return this.#redirecting;
  }

  set redirecting(value: Redirecting) {
    if (value.from.number !== this.#redirecting.from.number) this.#kept.changed();
    this.#redirecting = value;
  }

  /** Raises ChannelCallerId / ChannelConnectedLine for what changed: the channel raises its events. */
  protected abstract announceIdentity(changed: IdentityChange): void;

  setCaller(caller: Partial<CallerId>): void {
    this.caller = { ...this.caller, ...caller };
    this.announceIdentity(CALLER_CHANGED);
  }

  setConnected(connected: Partial<CallerId>): void {
    this.connected = { ...this.connected, ...connected };
    this.announceIdentity(CONNECTED_CHANGED);
  }

  /**
   * A new caller id and connected line in one step (a Local `;2` taking `;1`'s across as it is
   * called, core_unreal's staged snapshot): ChannelCallerId, then ChannelConnectedLine, each only
   * when that part really changed.
   */
  takeIdentity(identity: ChannelIdentity): void {
    this.announceIdentity(this.adoptIdentity(identity));
  }

  /** Takes the parts of `identity` that differ from the channel's, without announcing them. */
  protected adoptIdentity(identity: ChannelIdentity): IdentityChange {
    const differs = (now: Readonly<CallerId>, next: CallerId | undefined): next is CallerId => next !== undefined && (now.name !== next.name || now.number !== next.number);
    const caller = differs(this.caller, identity.caller);
    const connected = differs(this.connected, identity.connected);
    if (caller) this.caller = { ...this.caller, ...identity.caller };
    if (connected) this.connected = { ...this.connected, ...identity.connected };
    return { caller, connected };
  }

  get accountcode(): string {
    return this.#accountcode;
  }

  set accountcode(value: string) {
    this.#accountcode = value;
    this.#kept.changed();
  }

  get language(): string {
    return this.#language;
  }

  set language(value: string) {
    this.#language = value;
    this.#kept.changed();
  }

  get location(): Readonly<DialplanLocation> {
    return this.#location;
  }

  set location(value: Readonly<DialplanLocation>) {
    this.#location = value;
    this.#kept.changed();
  }

  get endpointId(): string | undefined {
    return this.endpointResource === undefined ? undefined : `${this.technology}/${this.endpointResource}`;
  }

  /**
   * The channel as ARI shows it. The same object is returned until something it shows changes
   * (it is never changed afterwards: whoever holds it may keep it, nobody may write to it), so the
   * events of an unchanged channel share one snapshot and one serialisation of it (eventText).
   */
  snapshot(): Model<'Channel'> {
    const kept = this.#kept.current();
    if (kept !== undefined) return kept;
    const snapshot = this.buildSnapshot();
    // A `channelvars` entry that reads a dialplan function may change with no write here: not kept.
    this.#kept.keep(this.readsFunctions() ? undefined : snapshot);
    return snapshot;
  }

  /** Every snapshot shows variable `name` from now on (a variable set with reportEvents). */
  protected reportVariable(name: string): void {
    (this.#reportedVariables ??= new Set()).add(name);
  }

  /** Whether a reported variable is a dialplan function (`CHANNEL(language)`), read afresh every time. */
  private readsFunctions(): boolean {
    for (const name of this.#settings.channelvars) if (name.includes('(')) return true;
    // Asked for every snapshot built; most channels report no variables (no Set iterator then).
    const reported = this.#reportedVariables;
    if (reported === undefined) return false;
    for (const name of reported) if (name.includes('(')) return true;
    return false;
  }

  /** The JSON text of an event this channel raised, from its kept snapshot's text (see KeptSnapshot). */
  eventText(event: CoreEvent): string | undefined {
    return this.#kept.eventText(event);
  }

  /** The same text in two parts (see KeptSnapshot.splitEventText). */
  splitEventText(event: CoreEvent, into: SplitEventText): boolean {
    return this.#kept.splitEventText(event, into);
  }

  private buildSnapshot(): Model<'Channel'> {
    const snapshot: Model<'Channel'> = {
      id: this.id,
      name: this.name,
      state: this.state,
      protocol_id: this.protocolId,
      // The caller and connected objects are replaced, never changed in place (Readonly), and a
      // snapshot is never written to: it shows them as they are instead of copying them.
      caller: this.caller,
      connected: this.connected,
      accountcode: this.accountcode,
      dialplan: this.dialplanShown(),
      creationtime: (this.#creationText ??= formatAriDate(new Date(this.#createdAt))),
      language: this.language,
    };
    const channelvars = this.#settings.channelvars;
    const reported = this.#reportedVariables;
    const names = channelvars.length === 0 && reported === undefined ? undefined : new Set(reported === undefined ? channelvars : [...channelvars, ...reported]);
    if (names) {
      // fromEntries defines own properties, so a variable named `__proto__` is a key like any other.
      snapshot.channelvars = Object.fromEntries(Array.from(names, (name) => [name, this.reportedValue(name)]));
    }
    const rdnis = this.#redirecting.from.number;
    if (rdnis) snapshot.caller_rdnis = rdnis;
    return snapshot;
  }

  private dialplanShown(): Model<'Channel'>['dialplan'] {
    const location = this.#location;
    if (this.#dialplanShown !== undefined && this.#dialplanShownOf === location) return this.#dialplanShown;
    this.#dialplanShownOf = location;
    return (this.#dialplanShown = { context: location.context, exten: location.exten, priority: location.priority, app_name: location.appName, app_data: location.appData });
  }

  /**
   * A `channelvars` entry's value: a plain variable, or, as Asterisk does for an entry with
   * parentheses (`CHANNEL(language)`), the dialplan function read on the channel. A function that
   * cannot be read, or a read that would itself need this snapshot, gives ''.
   */
  private reportedValue(name: string): string {
    const open = name.indexOf('(');
    if (open <= 0 || !name.endsWith(')')) return this.variables.get(name) ?? '';
    if (this.#readingReportedFunction) return '';
    this.#readingReportedFunction = true;
    try {
      return this.readFunction(name.slice(0, open), name.slice(open + 1, -1)) ?? '';
    } catch {
      return '';
    } finally {
      this.#readingReportedFunction = false;
    }
  }
}
