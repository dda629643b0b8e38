// The table of live channels and of channel technologies. Creates channels with Asterisk-style
// ids (`<epoch seconds>.<sequence>`) and raises ChannelCreated; forgets them when destroyed.
import { DEFAULT_CHANNEL_VARIABLE_BYTES } from '../variable-limits.ts';
import type { Applications } from '../applications.ts';
import { ConflictError, InvalidError, NotFoundError, UnavailableError } from '../errors.ts';
import { Notifier } from '../../util/typed-emitter.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import { Channel, type ChannelEnvironment, type ChannelFunctions, type ChannelInit } from './channel.ts';
import type { ChannelDriver, ChannelRequest, ChannelTechnology, DriverFactory, Indication } from './technology.ts';
import type { EndableCollection } from '../../util/lifecycle.ts';

/** The driver of a channel without a far end: whatever the core asks of it goes nowhere. */
const INERT_DRIVER: ChannelDriver = Object.freeze({
  call() {},
  answer() {},
  hangup() {},
  indicate() {},
  sendDigit() {},
  writeFrame() {},
});

/** Asterisk refuses longer channel ids. */
export const MAX_CHANNEL_ID_LENGTH = 149;

export interface ChannelsOptions {
  readonly applications: Applications;
  readonly channelvars: readonly string[];
  readonly defaultLanguage: string;
  /** Most channels at once (`max_channels`, or the automatic limit the core derives for 0); 0 or absent = unlimited. */
  readonly maxChannels?: number;
  /** Most bytes of variables one channel holds (`variables.max_channel_bytes`); absent = the default. */
  readonly maxVariableBytes?: number;
  /** The dialplan functions of the core, which every channel of the table carries. */
  readonly functions: ChannelFunctions;
  /** Plays (or stops) in band what a channel's technology could not indicate (ChannelEnvironment.inbandIndication). */
  readonly inbandIndication?: (channel: Channel, indication: Indication) => void;
  /** A listener or technology failed while a channel was being notified (the channel went on). */
  readonly reportError?: (error: unknown, channel: Channel, during: string) => void;
}

export type ChannelListener = (channel: Channel) => void;

export class Channels implements EndableCollection {
  private readonly byId = new Map<string, Channel>();
  private readonly byName = new Map<string, Channel>();
  private readonly technologies = new Map<string, ChannelTechnology>();
  private readonly options: ChannelsOptions;
  /** Channels appearing and going, told to every listener even when one throws (reported). */
  #refusing: string | undefined;
  private readonly lifecycle = new Notifier<{ created: Channel; destroyed: Channel; state: Channel }>((error, event, channel) =>
    this.reportError(error, channel as Channel, `channel ${event} listener`),
  );
  /** The dialplan functions of the core; subsystems register the setters they own here. */
  readonly functions: ChannelFunctions;
  private idSequence = 0;
  /**
   * The counters of channel names, by the counter's name: in Asterisk each technology module
   * numbers its own channels from 0 (chan_pjsip's `chan_idx`, core_unreal's `name_sequence`
   * shared by Local and the bridge media channels, res_stasis_snoop's `chan_idx`), so
   * `PJSIP/alice-00000000` and `Local/s@default-00000000;1` can both be the first of their kind.
   * Per table, so a restart counts from 0 again as Asterisk does.
   */
  private readonly nameCounters = new Map<string, number>();

  /** What every channel of the table needs from it: one object for them all, not one per channel. */
  private readonly environment: ChannelEnvironment;

  constructor(options: ChannelsOptions) {
    this.options = options;
    this.functions = options.functions;
    this.environment = {
      table: this,
      functions: this.functions,
      publish: (event, scope, text) => this.options.applications.publish(event, scope, text),
      channelvars: this.options.channelvars,
      defaultLanguage: this.options.defaultLanguage,
      maxVariableBytes: this.options.maxVariableBytes ?? DEFAULT_CHANNEL_VARIABLE_BYTES,
      inbandIndication: options.inbandIndication,
      destroyed: (gone) => this.forget(gone),
      stateChanged: (changed) => this.lifecycle.emit('state', changed),
      reportError: (error, failed, during) => this.reportError(error, failed, during),
    };
  }

  /** Registers the technology under its name and its aliases (`Phone` for `Telephone`). */
  registerTechnology(technology: ChannelTechnology): void {
    for (const name of [technology.name, ...(technology.aliases ?? [])]) this.technologies.set(name.toLowerCase(), technology);
  }

  unregisterTechnology(name: string): void {
    const technology = this.technologies.get(name.toLowerCase());
    if (!technology) return;
    for (const each of [technology.name, ...(technology.aliases ?? [])]) this.technologies.delete(each.toLowerCase());
  }

  technology(name: string): ChannelTechnology | undefined {
    return this.technologies.get(name.toLowerCase());
  }

  technologyNames(): string[] {
    return [...new Set(this.technologies.values())].map((technology) => technology.name);
  }

  onCreated(listener: ChannelListener): void {
    this.lifecycle.on('created', listener);
  }

  onDestroyed(listener: ChannelListener): void {
    this.lifecycle.on('destroyed', listener);
  }

  /**
   * Told of every channel's state change, after its ChannelStateChange and before the listeners
   * the channel itself holds: one listener for all channels instead of one per channel.
   */
  onStateChanged(listener: ChannelListener): void {
    this.lifecycle.on('state', listener);
  }

  /** Listens for channels created or destroyed; returns what stops listening. */
  onLifecycle(event: 'created' | 'destroyed', listener: ChannelListener): () => void {
    this.lifecycle.on(event, listener);
    return () => this.lifecycle.off(event, listener);
  }

  /**
   * While `reason` is set, every new channel is refused with UnavailableError (ARI 503, SIP 503),
   * as Asterisk refuses channel allocation during `core stop gracefully`. Undefined takes calls again.
   */
  refuseNew(reason: string | undefined): void {
    this.#refusing = reason;
  }

  get refusingNew(): boolean {
    return this.#refusing !== undefined;
  }

  /**
   * Put before every generated id: Asterisk puts its `systemname` there so that the servers of a
   * cluster never make the same id; a cluster member sets its node name (two members started in the
   * same second would otherwise both make `<epoch>.1`).
   */
  idPrefix = '';

  /** A fresh unique id in Asterisk's form; the sequence starts at 0, as Asterisk's `uniqueint`. */
  newId(): string {
    const sequence = this.idSequence++;
    return `${this.idPrefix}${Math.floor(Date.now() / 1000)}.${sequence}`;
  }

  /**
   * The next number of the channel-name counter `counter` (0 first, wrapping after 2^32 as
   * Asterisk's unsigned counter), as the 8 hex digits of Asterisk's `%08x` (`0000001a`).
   */
  newNameSuffix(counter: string): string {
    const next = this.nameCounters.get(counter) ?? 0;
    this.nameCounters.set(counter, (next + 1) >>> 0);
    return next.toString(16).padStart(8, '0');
  }

  /** Throws ConflictError if a channel id cannot be used. */
  checkId(id: string | undefined): void {
    if (id === undefined || id === '') return;
    if (id.length > MAX_CHANNEL_ID_LENGTH) throw new InvalidError(`Channel id is longer than ${MAX_CHANNEL_ID_LENGTH} characters`);
    if (this.byId.has(id)) throw new ConflictError(`Channel with id ${id} already exists`);
  }

  /**
   * Used by technologies: builds, registers and announces a channel, with its driver in place
   * before ChannelCreated. Without a driver factory the channel has no far end (an inert driver).
   */
  create(init: Omit<ChannelInit, 'id'> & { readonly id?: string }, driver: DriverFactory = () => INERT_DRIVER): Channel {
    const id = init.id || this.newId();
    this.checkId(id);
    this.checkCapacity(1);
    const channel = new Channel(this.environment, { ...init, id }, driver);
    this.byId.set(id, channel);
    this.byName.set(channel.name, channel);
    // The table owns the creation event: only it knows when the channel is registered and
    // findable, which a listener of ChannelCreated may rely on.
    const created: CoreEventOf<'ChannelCreated'> = { type: 'ChannelCreated', timestamp: formatAriDate(), channel: channel.snapshot() };
    this.options.applications.publish(created, channel.scope(), channel);
    this.lifecycle.emit('created', channel);
    return channel;
  }

  /** Requests an outbound channel for `TECH/resource`. */
  request(dialString: string, options: Omit<ChannelRequest, 'resource'> = {}): Channel {
    const slash = dialString.indexOf('/');
    if (slash <= 0 || slash === dialString.length - 1) throw new InvalidError(`Endpoint must be of the form technology/resource: ${dialString}`);
    const technology = this.technology(dialString.slice(0, slash));
    if (!technology?.request) throw new InvalidError(`Unknown channel technology: ${dialString.slice(0, slash)}`);
    this.checkId(options.channelId);
    this.checkId(options.otherChannelId);
    if (options.channelId && options.channelId === options.otherChannelId) throw new InvalidError('channelId and otherChannelId must differ');
    // Every channel the request makes must fit (a proxy pair is two), so none is made in vain.
    this.checkCapacity(technology.channelsPerRequest ?? 1);
    const channel = technology.request({ ...options, resource: dialString.slice(slash + 1) });
    // A channel requested on behalf of one that a proxy pair led to is led to by it too.
    const requestor = options.requestor;
    if (requestor && channel.localDepth < requestor.localDepth) channel.localDepth = requestor.localDepth;
    return channel;
  }

  /** The `max_channels` limit, or 0 when there is none. */
  get maxChannels(): number {
    return this.options.maxChannels ?? 0;
  }

  /**
   * Throws UnavailableError when `count` more channels would exceed `max_channels`, as Asterisk
   * refuses to allocate a channel beyond its `maxcalls` (the request fails with congestion).
   */
  checkCapacity(count: number): void {
    if (this.#refusing !== undefined) throw new UnavailableError(`Refusing new channels: ${this.#refusing}`);
    const max = this.options.maxChannels ?? 0;
    if (max > 0 && this.byId.size + count > max) {
      throw new UnavailableError(`Maximum number of channels (${max}) reached`);
    }
  }

  get(idOrName: string): Channel | undefined {
    return this.byId.get(idOrName) ?? this.byName.get(idOrName);
  }

  require(idOrName: string): Channel {
    const channel = this.get(idOrName);
    if (!channel) throw new NotFoundError('Channel not found');
    return channel;
  }

  list(): Channel[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  /** Hangs up every channel (server shutdown). */
  /** Hangs every channel up with normal clearing (the lifecycle verb, see util/lifecycle.ts). */
  endAll(): void {
    for (const channel of this.list()) channel.end();
  }

  private forget(channel: Channel): void {
    this.byId.delete(channel.id);
    if (this.byName.get(channel.name) === channel) this.byName.delete(channel.name);
    this.options.applications.forgetObject('channel', channel.id);
    this.lifecycle.emit('destroyed', channel);
  }

  private reportError(error: unknown, channel: Channel, during: string): void {
    const report = this.options.reportError;
    if (report) {
      try {
        report(error, channel, during);
        return;
      } catch {
        // fall through to the console
      }
    }
    console.error(`channel ${channel.name}: ${during} failed:`, error);
  }
}
