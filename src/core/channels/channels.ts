// The table of live channels and of channel technologies. Creates channels with Asterisk-style
// ids (`<epoch seconds>.<sequence>`) and raises ChannelCreated; forgets them when destroyed.
import type { Applications } from '../applications.ts';
import { ConflictError, InvalidError, NotFoundError } from '../errors.ts';
import { Channel, type ChannelInit } from './channel.ts';
import type { ChannelRequest, ChannelTechnology } from './technology.ts';

/** Asterisk refuses longer channel ids. */
export const MAX_CHANNEL_ID_LENGTH = 149;

export interface ChannelsOptions {
  readonly applications: Applications;
  readonly channelvars: readonly string[];
  readonly defaultLanguage: string;
}

export type ChannelListener = (channel: Channel) => void;

export class Channels {
  private readonly byId = new Map<string, Channel>();
  private readonly byName = new Map<string, Channel>();
  private readonly technologies = new Map<string, ChannelTechnology>();
  private readonly options: ChannelsOptions;
  private readonly createdListeners: ChannelListener[] = [];
  private readonly destroyedListeners: ChannelListener[] = [];
  private idSequence = 0;
  private nameSequence = 0;

  constructor(options: ChannelsOptions) {
    this.options = options;
  }

  registerTechnology(technology: ChannelTechnology): void {
    this.technologies.set(technology.name.toLowerCase(), technology);
  }

  unregisterTechnology(name: string): void {
    this.technologies.delete(name.toLowerCase());
  }

  technology(name: string): ChannelTechnology | undefined {
    return this.technologies.get(name.toLowerCase());
  }

  technologyNames(): string[] {
    return [...this.technologies.values()].map((technology) => technology.name);
  }

  onCreated(listener: ChannelListener): void {
    this.createdListeners.push(listener);
  }

  onDestroyed(listener: ChannelListener): void {
    this.destroyedListeners.push(listener);
  }

  /** A fresh unique id in Asterisk's form. */
  newId(): string {
    this.idSequence += 1;
    return `${Math.floor(Date.now() / 1000)}.${this.idSequence}`;
  }

  /** The sequence suffix technologies put in channel names (`-0000001a`). */
  newNameSuffix(): string {
    this.nameSequence = (this.nameSequence + 1) >>> 0;
    return this.nameSequence.toString(16).padStart(8, '0');
  }

  /** Throws ConflictError if a channel id cannot be used. */
  checkId(id: string | undefined): void {
    if (id === undefined || id === '') return;
    if (id.length > MAX_CHANNEL_ID_LENGTH) throw new InvalidError(`Channel id is longer than ${MAX_CHANNEL_ID_LENGTH} characters`);
    if (this.byId.has(id)) throw new ConflictError(`Channel with id ${id} already exists`);
  }

  /** Used by technologies: builds, registers and announces a channel. */
  create(init: Omit<ChannelInit, 'id'> & { readonly id?: string }): Channel {
    const id = init.id || this.newId();
    this.checkId(id);
    const channel = new Channel(
      {
        table: this,
        publish: (event, scope) => this.options.applications.publish(event, scope),
        channelvars: this.options.channelvars,
        defaultLanguage: this.options.defaultLanguage,
        destroyed: (gone) => this.forget(gone),
      },
      { ...init, id },
    );
    this.byId.set(id, channel);
    this.byName.set(channel.name, channel);
    channel.raise('ChannelCreated');
    for (const listener of this.createdListeners) listener(channel);
    return channel;
  }

  /** Requests an outbound channel for `TECH/resource`. */
  request(dialString: string, options: Omit<ChannelRequest, 'resource'> = {}): Channel {
    const slash = dialString.indexOf('/');
    if (slash <= 0 || slash === dialString.length - 1) throw new InvalidError(`Endpoint must be of the form technology/resource: ${dialString}`);
    const technology = this.technology(dialString.slice(0, slash));
    if (!technology) throw new InvalidError(`Unknown channel technology: ${dialString.slice(0, slash)}`);
    this.checkId(options.channelId);
    this.checkId(options.otherChannelId);
    if (options.channelId && options.channelId === options.otherChannelId) throw new InvalidError('channelId and otherChannelId must differ');
    return technology.request({ ...options, resource: dialString.slice(slash + 1) });
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
  hangupAll(cause: number): void {
    for (const channel of this.list()) channel.hangup(cause);
  }

  private forget(channel: Channel): void {
    this.byId.delete(channel.id);
    if (this.byName.get(channel.name) === channel) this.byName.delete(channel.name);
    this.options.applications.forgetObject('channel', channel.id);
    for (const listener of this.destroyedListeners) listener(channel);
  }
}
