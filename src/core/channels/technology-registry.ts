// The channel technologies of one core: each is registered as a module (`chan_<name>.so`) that
// starts the technology with its context when it loads and stops it when it unloads. The core
// stops whatever still runs in the reverse order of start. Nothing here knows any technology.
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../../config/config.ts';
import type { Applications } from '../applications.ts';
import type { Bridges } from '../bridges/bridges.ts';
import type { CoreEvent } from '../../spec/events.ts';
import type { DynamicConfig } from '../dynamic-config/store.ts';
import type { ConfigChange } from '../dynamic-config/types.ts';
import type { Endpoints } from '../endpoints.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { MediaEngine } from '../media-engine.ts';
import type { MessageRouter } from '../messages.ts';
import { runMessageDialplan } from '../../pbx/message-functions.ts';
import type { ModuleRegistry } from '../modules.ts';
import type { Stasis } from '../stasis.ts';
import { CAUSE } from './causes.ts';
import type { Channel, DialplanLocation } from './channel.ts';
import type { Channels } from './channels.ts';
import { applyVariables, splitAppArgs } from '../../control/originate.ts';
import type { ChannelTechnology, EnterApplicationOptions, ExternalMediaSupport, TechnologyContext, TransferRequest } from './technology.ts';

export interface TechnologyServices {
  readonly channels: Channels;
  readonly media: MediaEngine;
  readonly log: Logger;
  readonly config: PatchbayConfig;
  readonly applications: Applications;
  readonly stasis: Stasis;
  readonly endpoints: Endpoints;
  readonly messages: MessageRouter;
  readonly modules: ModuleRegistry;
  readonly dynamicConfig: DynamicConfig;
  /** Runs the dialplan on a channel at its location. */
  readonly startDialplan: (channel: Channel) => void;
  /** Bridges, for the bridge and peer a transfer event names. */
  readonly bridges?: Bridges;
}

/** What a running technology registered through its context, undone when it stops. */
interface Running {
  readonly technology: ChannelTechnology;
  readonly endpointTechnologies: string[];
  hasMessageTransport: boolean;
  /** Configuration change listeners it left subscribed. */
  readonly configListeners: Set<(change: ConfigChange) => void>;
}

export class Technologies {
  readonly #services: TechnologyServices;
  readonly #known = new Map<string, ChannelTechnology>();
  /** Running technologies in the order they started. */
  readonly #running: Running[] = [];

  constructor(services: TechnologyServices) {
    this.#services = services;
  }

  /** Registers the technology's module; it starts when the module loads. */
  add(technology: ChannelTechnology): void {
    const key = technology.name.toLowerCase();
    if (this.#known.has(key)) throw new Error(`Channel technology ${technology.name} is added twice`);
    this.#known.set(key, technology);
    const { channels, modules } = this.#services;
    modules.register({
      name: technology.module.name,
      description: technology.module.description,
      supportLevel: technology.module.supportLevel ?? 'core',
      load: () => this.start(technology),
      unload: () => this.stop(technology),
      useCount: () => channels.list().filter((channel) => channel.technology === technology.name).length,
    });
  }

  /** An added technology by name (case-insensitive), running or not. */
  get(name: string): ChannelTechnology | undefined {
    return this.#known.get(name.toLowerCase());
  }

  isRunning(technology: ChannelTechnology): boolean {
    return this.#running.some((entry) => entry.technology === technology);
  }

  /** The running technology that serves externalMedia for an encapsulation and transport. */
  externalMedia(encapsulation: string, transport: string): ExternalMediaSupport | undefined {
    for (const { technology } of this.#running) {
      const support = technology.externalMedia;
      if (support && support.encapsulation === encapsulation && support.transport === transport) return support;
    }
    return undefined;
  }

  async start(technology: ChannelTechnology): Promise<void> {
    if (this.isRunning(technology)) return;
    const running: Running = { technology, endpointTechnologies: [], hasMessageTransport: false, configListeners: new Set() };
    await technology.start(this.#context(running));
    this.#running.push(running);
    this.#services.channels.registerTechnology(technology);
  }

  async stop(technology: ChannelTechnology): Promise<void> {
    const index = this.#running.findIndex((entry) => entry.technology === technology);
    if (index < 0) return;
    const [running] = this.#running.splice(index, 1);
    const { channels, endpoints, messages } = this.#services;
    if (channels.technology(technology.name) === technology) channels.unregisterTechnology(technology.name);
    if (running.hasMessageTransport) messages.setTransport(technology.name, undefined);
    for (const name of running.endpointTechnologies) endpoints.unregisterTechnology(name);
    for (const listener of running.configListeners) this.#services.dynamicConfig.off('change', listener);
    running.configListeners.clear();
    await technology.stop();
  }

  /** Shutdown: every running technology stops, the last started first. Returns the failures. */
  async stopAll(): Promise<unknown[]> {
    const failures: unknown[] = [];
    for (const { technology } of [...this.#running].reverse()) {
      try {
        await this.stop(technology);
      } catch (error) {
        failures.push(error);
      }
    }
    return failures;
  }

  #context(running: Running): TechnologyContext {
    const services = this.#services;
    const { technology } = running;
    return {
      channels: services.channels,
      media: services.media,
      log: services.log.child({ technology: technology.name }),
      config: services.config,
      enterDialplan: (channel, location) => this.#enterDialplan(channel, location),
      enterApplication: (channel, app, options) => this.#enterApplication(channel, app, options),
      raiseTransfer: (channel, request) => this.#raiseTransfer(channel, request),
      endpoints: {
        register: (provider) => {
          services.endpoints.registerTechnology(provider);
          running.endpointTechnologies.push(provider.technology);
        },
        setState: (name, resource, state) => services.endpoints.provider(name)?.setState?.(resource, state),
        channelIds: (name, resource) => services.endpoints.channelsOf(name, resource),
        publish: (name, resource, event) => {
          const endpoint = services.endpoints.get(name, resource) ?? { technology: name, resource, state: 'offline', channel_ids: [] };
          services.applications.publish({ ...event, timestamp: formatAriDate(), endpoint }, { endpointIds: [`${endpoint.technology}/${endpoint.resource}`] });
        },
      },
      configObjects: {
        list: (configClass, objectType) => services.dynamicConfig.listStored(configClass, objectType),
        onChange: (listener) => {
          const wrapped = (change: ConfigChange) => listener(change);
          services.dynamicConfig.on('change', wrapped);
          running.configListeners.add(wrapped);
          return () => {
            services.dynamicConfig.off('change', wrapped);
            running.configListeners.delete(wrapped);
          };
        },
      },
      messages: {
        setTransport: (transport) => {
          services.messages.setTransport(technology.name, transport);
          running.hasMessageTransport = transport !== undefined;
        },
        receive: (message, resource) => services.messages.receive(message, technology.name, resource),
        runDialplan: (message, location) => runMessageDialplan(services.channels, (channel) => services.startDialplan(channel), message, location),
      },
    };
  }

  /**
   * ChannelTransfer, as Asterisk builds it: the request's destination, and for the requesting
   * channel (and the destination channel, when known) the bridge it is in and its peer there.
   * Asterisk renders channel_unavailable as channel_declined.
   */
  #raiseTransfer(channel: Channel, request: TransferRequest): void {
    const surroundings = (member: Channel): { connected_channel?: unknown; bridge?: unknown } => {
      const bridge = member.bridgeId ? this.#services.bridges?.get(member.bridgeId) : undefined;
      if (!bridge) return {};
      const peerId = bridge.channelIds().find((id) => id !== member.id);
      const peer = peerId ? this.#services.channels.get(peerId) : undefined;
      return { ...(peer ? { connected_channel: peer.snapshot() } : {}), bridge: bridge.snapshot() };
    };
    const destination = {
      destination: request.destination,
      ...(request.protocolId !== undefined ? { protocol_id: request.protocolId } : {}),
      ...(request.params && request.params.length > 0 ? { additional_protocol_params: request.params.map((param) => ({ parameter_name: param.name, parameter_value: param.value })) } : {}),
    };
    const target = request.destinationChannel;
    const event = {
      type: 'ChannelTransfer',
      timestamp: formatAriDate(),
      ...(request.state ? { state: request.state === 'channel_unavailable' ? 'channel_declined' : request.state } : {}),
      refer_to: { requested_destination: destination, ...(target ? { destination_channel: target.snapshot(), ...surroundings(target) } : {}) },
      referred_by: { source_channel: channel.snapshot(), ...surroundings(channel) },
    };
    channel.publishEvent(event as unknown as CoreEvent);
  }

  #enterDialplan(channel: Channel, location: Partial<DialplanLocation> | undefined): void {
    if (location) channel.setLocation(location);
    this.#services.startDialplan(channel);
  }

  #enterApplication(channel: Channel, app: string, options: EnterApplicationOptions = {}): boolean {
    const { applications, stasis, log } = this.#services;
    // The application sees the set-up (variables, dialplan position), as for originate and create.
    applications.subscribeInternal(app, 'channel', channel.id);
    for (const [name, value] of Object.entries(options.technologyVariables ?? {})) channel.setVariable(name, value, true);
    applyVariables(channel, options.variables ?? []);
    channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: options.args ? `${app},${options.args}` : app });
    if (stasis.enter(channel, app, splitAppArgs(options.args))) return true;
    log.warn({ channel: channel.name, app }, `Stasis application is not registered; hanging the ${channel.technology} channel up`);
    channel.hangup(CAUSE.normal);
    return false;
  }
}
