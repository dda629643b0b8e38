// Endpoints: the devices or accounts a technology can reach (`Phone/alice`), grouped per
// technology. Each technology that has endpoints registers an EndpointProvider; the registry adds
// what no provider knows — the live channels on each endpoint — and raises EndpointStateChange.
// A technology-level endpoint (`Phone`) exists for every registered technology: it has no state,
// cannot be created, destroyed or dialled, and its subscribers receive the events of every
// endpoint of the technology (the event router matches `endpoint:TECH` by prefix).
import type { Applications } from './applications.ts';
import type { Channel } from './channels/channel.ts';
import type { Channels } from './channels/channels.ts';
import { ConflictError, NotFoundError } from './errors.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { Model } from '../spec/index.ts';
import { Notifier } from '../util/typed-emitter.ts';
import type { EndpointChange, EndpointInfo, EndpointProvider, EndpointState } from './endpoint-provider.ts';

// What a technology implements lives in endpoint-provider.ts (the technology contract names it
// without importing this registry); re-exported for the technologies that provide endpoints.
export type { EndpointChange, EndpointChangeListener, EndpointInfo, EndpointProvider, EndpointState } from './endpoint-provider.ts';

/** The ARI Endpoint model, as declared; `state` is absent for a technology-level endpoint, which has no state. */
export type EndpointSnapshot = Model<'Endpoint'>;

/** A change seen by the registry's listeners, with the endpoint's canonical id (`Phone/alice`). */
export interface EndpointRegistryChange extends EndpointChange {
  readonly technology: string;
  readonly id: string;
}

export interface EndpointsOptions {
  readonly applications: Applications;
  readonly channels: Channels;
  /** A change listener failed; the others were still told. */
  readonly reportError?: (error: unknown, during: string) => void;
}

interface Registered {
  readonly provider: EndpointProvider;
  readonly unwatch: () => void;
}

/** Internal key of an endpoint: technologies match case-insensitively, resources exactly. */
const keyOf = (technology: string, resource: string): string => `${technology.toLowerCase()}/${resource}`;

export class Endpoints {
  private readonly technologies = new Map<string, Registered>();
  /** Endpoint key → ids of its live channels, in the order they appeared. */
  private readonly channelIds = new Map<string, Set<string>>();
  /** Endpoint changes, told to every listener even when one throws. */
  private readonly changes: Notifier<{ change: EndpointRegistryChange }>;
  private readonly applications: Applications;

  constructor(options: EndpointsOptions) {
    this.applications = options.applications;
    this.changes = new Notifier(options.reportError ? (error) => options.reportError?.(error, 'endpoint change listener') : undefined);
    options.channels.onCreated((channel) => this.channelAdded(channel));
    options.channels.onDestroyed((channel) => this.channelRemoved(channel));
  }

  registerTechnology(provider: EndpointProvider): void {
    const name = provider.technology.toLowerCase();
    if (this.technologies.has(name)) throw new ConflictError(`Endpoint technology ${provider.technology} is already registered`);
    const unwatch = provider.watch((change) => this.providerChanged(provider, change));
    this.technologies.set(name, { provider, unwatch });
  }

  unregisterTechnology(technology: string): void {
    const registered = this.technologies.get(technology.toLowerCase());
    if (!registered) return;
    registered.unwatch();
    this.technologies.delete(technology.toLowerCase());
    const name = registered.provider.technology;
    for (const info of registered.provider.list()) this.applications.forgetObject('endpoint', `${name}/${info.resource}`);
    this.applications.forgetObject('endpoint', name);
  }

  /** The provider of a technology, matched case-insensitively. */
  provider(technology: string): EndpointProvider | undefined {
    return this.technologies.get(technology.toLowerCase())?.provider;
  }

  /** The canonical spelling of a registered technology (`phone` → `Phone`). */
  technologyName(technology: string): string | undefined {
    return this.provider(technology)?.technology;
  }

  technologyNames(): string[] {
    return [...this.technologies.values()].map(({ provider }) => provider.technology);
  }

  /** Reports endpoints appearing, disappearing and changing state (device states follow them). */
  onChange(listener: (change: EndpointRegistryChange) => void): void {
    this.changes.on('change', listener);
  }

  /** Every endpoint of every technology, by technology then resource. */
  list(): EndpointSnapshot[] {
    const technologies = [...this.technologies.values()].map(({ provider }) => provider);
    technologies.sort((a, b) => compare(a.technology, b.technology));
    return technologies.flatMap((provider) => this.listOf(provider));
  }

  /** The endpoints of one technology; NotFoundError when the technology has no endpoints registry. */
  listByTechnology(technology: string): EndpointSnapshot[] {
    const provider = this.provider(technology);
    if (!provider) throw new NotFoundError(`No Endpoints found - invalid tech ${technology}`);
    return this.listOf(provider);
  }

  /** One endpoint (technology matched case-insensitively), or undefined. */
  get(technology: string, resource: string): EndpointSnapshot | undefined {
    if (resource === '') return undefined;
    const provider = this.provider(technology);
    const info = provider?.get(resource);
    return provider && info ? this.snapshotOf(provider, info) : undefined;
  }

  require(technology: string, resource: string): EndpointSnapshot {
    const snapshot = this.get(technology, resource);
    if (!snapshot) throw new NotFoundError('Endpoint not found');
    return snapshot;
  }

  /** The state of an endpoint, or undefined when it does not exist. */
  state(technology: string, resource: string): EndpointState | undefined {
    return resource === '' ? undefined : this.provider(technology)?.get(resource)?.state;
  }

  /** The channels in use at which the endpoint's device is BUSY (EndpointProvider.busyAt); 0: never. */
  busyAt(technology: string, resource: string): number {
    return resource === '' ? 0 : (this.provider(technology)?.busyAt?.(resource) ?? 0);
  }

  /**
   * Looks an endpoint up by its event-source id: `TECH/resource`, or `TECH` for the
   * technology-level endpoint. The technology must be spelled as registered, since subscriptions
   * and event scopes compare ids exactly.
   */
  lookup(id: string): EndpointSnapshot | undefined {
    const slash = id.indexOf('/');
    const technology = slash < 0 ? id : id.slice(0, slash);
    const provider = this.provider(technology);
    if (!provider || provider.technology !== technology) return undefined;
    if (slash < 0) return { technology: provider.technology, resource: '', channel_ids: [] };
    return this.get(technology, id.slice(slash + 1));
  }

  /** Ids of the live channels on an endpoint. */
  channelsOf(technology: string, resource: string): string[] {
    return [...(this.channelIds.get(keyOf(technology, resource)) ?? [])];
  }

  private listOf(provider: EndpointProvider): EndpointSnapshot[] {
    return provider
      .list()
      .sort((a, b) => compare(a.resource, b.resource))
      .map((info) => this.snapshotOf(provider, info));
  }

  private snapshotOf(provider: EndpointProvider, info: EndpointInfo): EndpointSnapshot {
    const snapshot: EndpointSnapshot = {
      technology: provider.technology,
      resource: info.resource,
      state: info.state,
      channel_ids: this.channelsOf(provider.technology, info.resource),
    };
    if (info.maxChannels !== undefined) snapshot.max_channels = info.maxChannels;
    return snapshot;
  }

  private providerChanged(provider: EndpointProvider, change: EndpointChange): void {
    const id = `${provider.technology}/${change.resource}`;
    if (change.kind === 'state') {
      const info = provider.get(change.resource);
      // As in Asterisk, only a change of state is reported, not channels coming and going.
      if (info && info.state !== change.previous) {
        this.applications.publish(
          { type: 'EndpointStateChange', timestamp: formatAriDate(), endpoint: this.snapshotOf(provider, info) },
          { endpointIds: [id] },
        );
      }
    } else if (change.kind === 'removed') {
      this.applications.forgetObject('endpoint', id);
    }
    this.changes.emit('change', { ...change, technology: provider.technology, id });
  }

  private channelAdded(channel: Channel): void {
    if (channel.endpointResource === undefined) return;
    const key = keyOf(channel.technology, channel.endpointResource);
    let ids = this.channelIds.get(key);
    if (!ids) this.channelIds.set(key, (ids = new Set()));
    ids.add(channel.id);
  }

  private channelRemoved(channel: Channel): void {
    if (channel.endpointResource === undefined) return;
    const key = keyOf(channel.technology, channel.endpointResource);
    const ids = this.channelIds.get(key);
    if (!ids) return;
    ids.delete(channel.id);
    if (ids.size === 0) this.channelIds.delete(key);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
