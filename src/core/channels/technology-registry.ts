// The channel technologies of one core: each is registered as a module (`chan_<name>.so`) that
// starts the technology with its context when it loads and stops it when it unloads. The core
// stops whatever still runs in the reverse order of start. Nothing here knows any technology.
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../../config/config.ts';
import type { Applications } from '../applications.ts';
import type { Bridges } from '../bridges/bridges.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import type { DynamicConfig } from '../dynamic-config/store.ts';
import type { ConfigChange } from '../dynamic-config/types.ts';
import type { Endpoints } from '../endpoints.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { MediaEngine } from '../media-engine.ts';
import type { MessageRouter, TextMessage } from '../messages.ts';
import type { ModuleRegistry } from '../modules.ts';
import type { Stasis } from '../stasis.ts';
import type { RuntimeExtensions } from '../runtime-extensions.ts';
import { attendedTransfer, blindTransfer, replaceChannel } from './call-transfers.ts';
import { CAUSE } from './causes.ts';
import { canLinkFrom, linkedAttendedTransfer } from './stasis-bridge-attended.ts';
import { playTransferCompleteSound, type PlaySound } from './transfer-complete-sound.ts';
import { stasisBridgeBlindTransfer, type StasisBridgeTransferDeps } from './stasis-bridge-transfer.ts';
import { TwoPartyCall } from './two-party-call.ts';
import type { Channel, DialplanLocation } from './channel.ts';
import type { Channels } from './channels.ts';
import { splitArgs } from '../../dialplan/args.ts';
import type { DeviceStateValue } from '../device-states.ts';
import type { ExtensionStateChange, ExtensionStates } from '../extension-states.ts';
import type { Mailboxes } from '../mailboxes.ts';
import { UnavailableError } from '../errors.ts';
import type { VariableAssignment } from '../variable-limits.ts';
import type {
  ChannelTechnology,
  EnterApplicationOptions,
  ExternalMediaSupport,
  TechnologyApplication,
  TechnologyContext,
  TechnologyPickup,
  TechnologyFunction,
  TransferRequest,
} from './technology.ts';

/**
 * What technologies need of the dialplan, which the kernel does not have: the floor above it
 * (the dialplan executor and its registry) provides this.
 */
export interface TechnologyDialplan {
  /** Runs the dialplan on a channel at its location. */
  start(channel: Channel): void;
  /** Runs the dialplan for a received out-of-call message, on a channel of its own. */
  runMessage(message: TextMessage, location: { readonly context: string; readonly exten: string }): void;
  /** Sets variables (or writes functions: `CALLERID(name)`) on a channel, all or none. */
  applyVariables(channel: Channel, assignments: readonly VariableAssignment[]): void;
  /** Adds a function to the dialplan; returns its removal. Throws when the name is taken. */
  registerFunction(fn: TechnologyFunction): () => void;
  /** Adds an application to the dialplan; returns its removal. */
  registerApplication(application: TechnologyApplication): () => void;
  extensionExists(context: string, exten: string): boolean;
  /** Whether `exten` matches, or could after more digits (Asterisk's canmatch). */
  extensionCanMatch(context: string, exten: string): boolean;
  /** Extensions added while running (a registrar's), kept across dialplan reloads. */
  readonly extensions: RuntimeExtensions;
}

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
  readonly dialplan: TechnologyDialplan;
  /** Bridges, for the bridge and peer a transfer event names. */
  readonly bridges?: Bridges;
  /** Music on hold on channels; throws when it is not available. */
  readonly musicOnHold?: { start(channel: Channel, musicClass?: string): void; stop(channel: Channel): void };
  /** The hints' states (SIP BLF and presence subscriptions). */
  readonly extensionStates: ExtensionStates;
  /** Hints as written, from the dialplan as it stands now. */
  readonly hint: (context: string, exten: string) => string | undefined;
  readonly mailboxes: Mailboxes;
  /** Call pickup by the pickup extension. */
  readonly pickup?: TechnologyPickup;
  /**
   * For a blind transfer's destination that parks (its first priority is Park()): what takes the
   * transferer over (it hears the space, then is hung up); undefined for any other destination.
   */
  parkingTransfer?(destination: Pick<DialplanLocation, 'context' | 'exten'>): ((transferer: Channel, transferee: Channel) => void) | undefined;
  /** Plays a sound to a channel (an attended transfer's ATTENDED_TRANSFER_COMPLETE_SOUND). */
  readonly playSound?: PlaySound;
}

/** A core without call pickup: no extension, nothing picked up. */
const NO_PICKUP: TechnologyPickup = { extension: '', call: () => Promise.resolve(false) };

/** What a running technology registered through its context, undone when it stops. */
interface Running {
  readonly technology: ChannelTechnology;
  readonly endpointTechnologies: string[];
  hasMessageTransport: boolean;
  /** Configuration change listeners it left subscribed. */
  readonly configListeners: Set<(change: ConfigChange) => void>;
  /** Removals of the dialplan functions and applications it registered. */
  readonly dialplanRemovals: (() => void)[];
  /** Removals of the extension state and mailbox listeners it left. */
  readonly watchRemovals: Set<() => void>;
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
      ...(technology.reload && { reload: () => technology.reload?.() }),
      useCount: () => channels.list().filter((channel) => channel.technology === technology.name).length,
      ...(technology.module.autoload && { autoload: () => technology.module.autoload!(this.#services.config) }),
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
    const running: Running = { technology, endpointTechnologies: [], hasMessageTransport: false, configListeners: new Set(), dialplanRemovals: [], watchRemovals: new Set() };
    try {
      await technology.start(this.#context(running));
    } catch (error) {
      // A technology that failed to start leaves nothing registered behind.
      for (const remove of running.dialplanRemovals.splice(0)) remove();
      for (const remove of [...running.watchRemovals]) remove();
      for (const name of running.endpointTechnologies.splice(0)) this.#services.endpoints.unregisterTechnology(name);
      throw error;
    }
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
    for (const remove of running.dialplanRemovals.splice(0)) remove();
    for (const remove of [...running.watchRemovals]) remove();
    await technology.stop();
  }

  /**
   * The state a running technology gives one of its devices (`TECH/resource`, the technology
   * named case-insensitively or by an alias); undefined when it has none to give.
   */
  deviceState(device: string): DeviceStateValue | undefined {
    const slash = device.indexOf('/');
    if (slash <= 0) return undefined;
    const technology = this.#services.channels.technology(device.slice(0, slash));
    return technology && this.isRunning(technology) ? technology.deviceState?.(device.slice(slash + 1)) : undefined;
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
      transfers: {
        blind: (transferer, destination, transfereeVariables) =>
          blindTransfer(transferer, destination, (channel) => services.dialplan.start(channel), transfereeVariables, services.parkingTransfer?.(destination)),
        // Two Dial() calls: the transferee moves into the target's bridge; any leg in an
        // application's bridge: the bridges are linked by a Local pair (stasis-bridge-attended.ts).
        attended: (firstLeg, secondLeg) => {
          playTransferCompleteSound(firstLeg, secondLeg, this.#bridgeFellows(secondLeg), services.playSound);
          return TwoPartyCall.of(firstLeg) && TwoPartyCall.of(secondLeg) ? attendedTransfer(firstLeg, secondLeg) : linkedAttendedTransfer(this.#stasisTransferDeps(), firstLeg, secondLeg);
        },
        canLink: (leg) => canLinkFrom(this.#stasisTransferDeps(), leg),
        blindInStasisBridge: (transferer, destination, variables) => stasisBridgeBlindTransfer(this.#stasisTransferDeps(), transferer, destination, variables),
        canReplace: (existing) => TwoPartyCall.of(existing) !== undefined,
        replace: (existing, replacement) => replaceChannel(existing, replacement),
      },
      pickup: services.pickup ?? NO_PICKUP,
      musicOnHold: {
        start: (channel, musicClass) => {
          try {
            services.musicOnHold?.start(channel, musicClass);
          } catch (error) {
            services.log.debug({ err: error, channel: channel.name }, 'music on hold not started');
          }
        },
        stop: (channel) => services.musicOnHold?.stop(channel),
      },
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
        exists: (configClass, objectType, id) => services.dynamicConfig.has(configClass, objectType, id),
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
        runDialplan: (message, location) => services.dialplan.runMessage(message, location),
      },
      registerFunction: (fn) => {
        running.dialplanRemovals.push(services.dialplan.registerFunction(fn));
      },
      registerApplication: (application) => {
        running.dialplanRemovals.push(services.dialplan.registerApplication(application));
      },
      extensionExists: (context, exten) => services.dialplan.extensionExists(context, exten),
      extensionCanMatch: (context, exten) => services.dialplan.extensionCanMatch(context, exten),
      dialplanExtensions: services.dialplan.extensions,
      extensionStates: {
        hint: (context, exten) => services.hint(context, exten),
        state: (context, exten) => services.extensionStates.state(exten, context),
        onChange: (listener) => {
          const wrapped = (change: ExtensionStateChange) => listener(change);
          services.extensionStates.on('change', wrapped);
          const remove = () => {
            services.extensionStates.off('change', wrapped);
            running.watchRemovals.delete(remove);
          };
          running.watchRemovals.add(remove);
          return remove;
        },
      },
      mailboxes: {
        get: (name) => services.mailboxes.find(name),
        publish: (name, oldMessages, newMessages) => {
          try {
            services.mailboxes.update(name, oldMessages, newMessages);
            return true;
          } catch (error) {
            // max_mailboxes reached: not stored, and the sender is told so.
            if (error instanceof UnavailableError) return false;
            throw error;
          }
        },
        onChange: (listener) => {
          const unsubscribe = services.mailboxes.onChange(listener);
          const remove = () => {
            unsubscribe();
            running.watchRemovals.delete(remove);
          };
          running.watchRemovals.add(remove);
          return remove;
        },
      },
    };
  }

  /**
   * ChannelTransfer, as Asterisk builds it: the request's destination, and for the requesting
   * channel (and the destination channel, when known) the bridge it is in and its peer there.
   * Asterisk renders channel_unavailable as channel_declined.
   */
  #raiseTransfer(channel: Channel, request: TransferRequest): void {
    const surroundings = (member: Channel): { connected_channel?: Model<'Channel'>; bridge?: Model<'Bridge'> } => {
      const bridge = member.bridgeId ? this.#services.bridges?.shown(member.bridgeId) : undefined;
      if (!bridge) return {};
      const peerId = bridge.channelIds().find((id) => id !== member.id);
      const peer = peerId ? this.#services.channels.get(peerId) : undefined;
      return { ...(peer ? { connected_channel: peer.snapshot() } : {}), bridge: bridge.eventSnapshot() };
    };
    const destination = {
      destination: request.destination,
      ...(request.protocolId !== undefined ? { protocol_id: request.protocolId } : {}),
      ...(request.params && request.params.length > 0 ? { additional_protocol_params: request.params.map((param) => ({ parameter_name: param.name, parameter_value: param.value })) } : {}),
    };
    const target = request.destinationChannel;
    const event: CoreEventOf<'ChannelTransfer'> = {
      type: 'ChannelTransfer',
      timestamp: formatAriDate(),
      ...(request.state ? { state: request.state === 'channel_unavailable' ? 'channel_declined' : request.state } : {}),
      refer_to: { requested_destination: destination, ...(target ? { destination_channel: target.snapshot(), ...surroundings(target) } : {}) },
      referred_by: { source_channel: channel.snapshot(), ...surroundings(channel) },
    };
    channel.publishEvent(event);
  }

  /** What a transfer out of an application's bridge needs of the core. */
  /** Who else is in `channel`'s bridge: its Dial() call's peer, or an application's bridge's other members. */
  #bridgeFellows(channel: Channel): Channel[] {
    const peer = TwoPartyCall.of(channel)?.peerOf(channel);
    if (peer) return [peer];
    const bridge = channel.bridgeId ? this.#services.bridges?.get(channel.bridgeId) : undefined;
    return (bridge?.channelIds() ?? []).filter((id) => id !== channel.id).flatMap((id) => this.#services.channels.get(id) ?? []);
  }

  #stasisTransferDeps(): StasisBridgeTransferDeps {
    const services = this.#services;
    return {
      bridgeOf: (channel) => (channel.bridgeId ? services.bridges?.get(channel.bridgeId) : undefined),
      channel: (id) => services.channels.get(id),
      // Asterisk's bridging core asks for a Local channel by name too (ast_request("Local")).
      requestLocal: (destination, requestor) => {
        const local = this.get('Local');
        if (!local?.request || !this.isRunning(local)) throw new Error('the Local channel technology is not running');
        return local.request({ resource: `${destination.exten}@${destination.context}`, requestor });
      },
      enterApplication: (channel, app, replaced) => {
        channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: app });
        return services.stasis.enter(channel, app, [], { replaceChannel: replaced }) !== false;
      },
    };
  }

  #enterDialplan(channel: Channel, location: Partial<DialplanLocation> | undefined): void {
    if (location) channel.setLocation(location);
    this.#services.dialplan.start(channel);
  }

  #enterApplication(channel: Channel, app: string, options: EnterApplicationOptions = {}): boolean {
    const { applications, stasis, log } = this.#services;
    // The application sees the set-up (variables, dialplan position), as for originate and create.
    applications.subscribeInternal(app, 'channel', channel.id);
    for (const [name, value] of Object.entries(options.technologyVariables ?? {})) channel.setVariable(name, value, true);
    this.#services.dialplan.applyVariables(channel, options.variables ?? []);
    channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: options.args ? `${app},${options.args}` : app });
    if (stasis.enter(channel, app, options.args ? splitArgs(options.args) : [])) return true;
    log.warn({ channel: channel.name, app }, `Stasis application is not registered; hanging the ${channel.technology} channel up`);
    channel.hangup(CAUSE.normal);
    return false;
  }
}
