// The contract between the core and a channel technology (src/channels/ has them). A technology
// creates channels and drives their far end; the core drives everything else. Technologies are
// assembled outside the core (src/channels/index.ts lists them, the server hands them to the
// core); each one is a module (`chan_<name>.so`) and, while it runs, holds the TechnologyContext it
// was started with: the only way it reaches into the core, and the way it adds to it (endpoints,
// dialplan functions and applications, a message transport), undone when it stops. The core asks
// it of its devices' states (deviceState) and a channel's driver of its own CHANNEL() items.
import type { RuntimeExtensions } from '../runtime-extensions.ts';
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../../config/config.ts';
import type { EndpointProvider, EndpointState } from '../endpoint-provider.ts';
import type { MediaEngine } from '../media-engine.ts';
import type { TextMessage, MessageTransport } from '../message-transport.ts';
import type { SupportLevel } from '../modules.ts';
import type { Channel, ChannelInit, DialplanLocation } from './channel.ts';
import type { DeviceStateValue } from '../device-states.ts';
import type { ExtensionState, ExtensionStateChange } from '../extension-state-types.ts';
import type { MailboxSnapshot } from '../mailboxes.ts';
import type { VariableAssignment } from '../variable-limits.ts';
import type { TransferResult } from './call-transfers.ts';
import type { StasisBridgeTransferOutcome } from './stasis-bridge-transfer.ts';
import type { ChannelDriver, TransferProgressState } from './driver.ts';

// A technology implements the driver too: re-exported so that the whole contract reads from here.
export type { ChannelDriver, Indication, TransferProgressState } from './driver.ts';

/** A transfer request received on a channel (a SIP REFER), as ChannelTransfer reports it. */
export interface TransferRequest {
  /** What the request names: the user part of the Refer-To URI. */
  readonly destination: string;
  /** The Call-ID of the call to replace (attended transfer), when given. */
  readonly protocolId?: string;
  readonly params?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  /** The channel of that call, when this server has it. */
  readonly destinationChannel?: Channel;
  /** The last progress reported; omitted in the first event. */
  readonly state?: TransferProgressState;
}

/** Makes a channel's driver; called once by the channel's constructor, before ChannelCreated. */
export type DriverFactory = (channel: Channel) => ChannelDriver;

export interface ChannelRequest {
  /** The part of the dial string after `TECH/`. */
  readonly resource: string;
  readonly channelId?: string;
  /** Id of the second channel of technologies that create two (a pair's `;2`). */
  readonly otherChannelId?: string;
  /** The channel this request is made on behalf of (inherits linked id and language). */
  readonly requestor?: Channel;
  readonly formats?: readonly string[];
}

/** ARI externalMedia's request, as the interface layer has checked it. */
export interface ExternalMediaRequest {
  readonly app: string;
  readonly appArgs?: string;
  /** `host:port` of the media server. */
  readonly externalHost: string;
  /** A codec name of the codec table (src/media/codecs.ts) that can be coded. */
  readonly format: string;
  readonly direction: 'both' | 'in' | 'out';
  readonly channelId?: string;
  readonly variables?: readonly VariableAssignment[];
  /** Transport-specific data (e.g. a session UUID). */
  readonly data?: string;
}

/** A technology that serves ARI externalMedia for one encapsulation over one transport. */
export interface ExternalMediaSupport {
  readonly encapsulation: string;
  readonly transport: string;
  /**
   * Creates the channel, connected to its far end, and puts it into `request.app`. InvalidError
   * for a bad host, format or data and for a far end that cannot be reached; ConflictError for a
   * channel id in use.
   */
  create(request: ExternalMediaRequest): Promise<Channel>;
}

/** How a technology appears in the module list (GET /asterisk/modules). */
export interface TechnologyModule {
  /** `chan_<name>.so` */
  readonly name: string;
  readonly description: string;
  readonly supportLevel?: SupportLevel;
  /**
   * False when the configuration says the technology is off (`sip.enabled: false` for PJSIP): the
   * server starts without loading it, as Asterisk's modules.conf `noload`; `module load` still can.
   */
  autoload?(config: PatchbayConfig): boolean;
}

export interface ChannelTechnology {
  /** As written in dial strings and channel names (`Phone` in `Phone/alice`). */
  readonly name: string;
  /** Other names dial strings may use for it (`Tel` for `Phone`); channels keep `name`. */
  readonly aliases?: readonly string[];
  readonly description: string;
  readonly module: TechnologyModule;
  /** How many channels one request makes (a proxy pair: 2); 1 when absent. Counted against max_channels. */
  readonly channelsPerRequest?: number;
  /** Called when the module loads; the technology keeps the context until stop(). */
  start(context: TechnologyContext): void | Promise<void>;
  /** Its module's reload (`module reload chan_<name>.so`, SIGHUP); absent when it has nothing to reload. */
  reload?(): void | Promise<void>;
  /**
   * Called when the module unloads and at shutdown (technologies stop in the reverse order of
   * their start): close listeners, sockets and sessions. Channels have been hung up by then.
   */
  stop(): void | Promise<void>;
  /**
   * Creates the outbound channel for a dial string (not yet calling). Technologies that cannot be
   * dialled leave it out. Throws InvalidError for a malformed resource, NotFoundError for an
   * unknown destination and UnavailableError when the channel cannot be had now (a limit is reached).
   */
  request?(request: ChannelRequest): Channel;
  /** Present when the technology serves ARI externalMedia. */
  readonly externalMedia?: ExternalMediaSupport;
  /**
   * The state of one of its devices (`resource` is the part after `TECH/`), as Asterisk's
   * ast_channel_tech devicestate: what ChanIsAvail asks first, before the state derived from the
   * device's channels and endpoint. (ARI's deviceStates and DEVICE_STATE() keep the derived state,
   * UNKNOWN for a device without either.) Undefined when it has nothing to say; technologies
   * without device states leave it out.
   */
  deviceState?(resource: string): DeviceStateValue | undefined;
}

/** What a technology may do with the channel table. */
export interface TechnologyChannels {
  /**
   * Builds, registers and announces a channel (ChannelCreated) with its driver. An inbound call
   * is a channel created `direction: 'inbound', state: 'Ring'`, then handed to enterDialplan().
   * Throws ConflictError for an id in use and UnavailableError beyond max_channels.
   */
  create(init: Omit<ChannelInit, 'id'> & { readonly id?: string }, driver: DriverFactory): Channel;
  /** Throws ConflictError (InvalidError for a bad one) if a channel id cannot be used. */
  checkId(id: string | undefined): void;
  /** Throws UnavailableError when `count` more channels would exceed max_channels. */
  checkCapacity(count: number): void;
  /**
   * The next number of the technology's own channel-name counter `counter` (from 0 per server
   * start, as each Asterisk module counts its own) as 8 hex digits (`0000001a`).
   */
  newNameSuffix(counter: string): string;
  get(idOrName: string): Channel | undefined;
}

/** Endpoints of the technology (`Phone/alice`): their registry and states. */
export interface TechnologyEndpoints {
  /** Registers the technology's endpoints; they are unregistered when the technology stops. */
  register(provider: EndpointProvider): void;
  /** Sets an endpoint's state through its provider (one that supports setState); ignored otherwise. */
  setState(technology: string, resource: string, state: EndpointState): void;
  /** Ids of the live channels on an endpoint (channels made with `endpointResource`). */
  channelIds(technology: string, resource: string): string[];
  /**
   * Raises a status event about one endpoint (ContactStatusChange, PeerStatusChange) to the
   * applications subscribed to it or to its technology; the core adds `endpoint` and `timestamp`.
   * An endpoint no longer known (just deleted) is described as offline.
   */
  publish(technology: string, resource: string, event: EndpointStatusEvent): void;
}

/** The endpoint status events a technology raises, without the parts the core fills in. */
export type EndpointStatusEvent =
  | {
      readonly type: 'ContactStatusChange';
      readonly contact_info: {
        readonly uri: string;
        readonly contact_status: 'Unreachable' | 'Reachable' | 'Unknown' | 'NonQualified' | 'Removed';
        readonly aor: string;
        readonly roundtrip_usec?: string;
      };
    }
  | {
      readonly type: 'PeerStatusChange';
      readonly peer: { readonly peer_status: string; readonly cause?: string; readonly address?: string; readonly port?: string; readonly time?: string };
    };

/** A change of a dynamic configuration object (created, updated or deleted). */
export interface ConfigObjectChange {
  readonly configClass: string;
  readonly objectType: string;
  readonly id: string;
  readonly action: 'created' | 'updated' | 'deleted';
}

/**
 * The dynamic configuration objects (Asterisk's sorcery): those of the configuration files
 * (read-only) and those created through ARI, as one set.
 */
export interface TechnologyConfigObjects {
  /** Every object of a type with the fields it sets (no defaults); empty for an unknown type. */
  list(configClass: string, objectType: string): { readonly id: string; readonly fields: Readonly<Record<string, string>> }[];
  /** Whether an object exists (false for an unknown type). */
  exists(configClass: string, objectType: string, id: string): boolean;
  /** Called after each change; returns the unsubscribe. Listeners left are removed when the technology stops. */
  onChange(listener: (change: ConfigObjectChange) => void): () => void;
}

/** Out-of-call text messages of the technology. */
export interface TechnologyMessages {
  /** Carries messages sent to `<technology>:...`; undefined returns them to local delivery. Cleared at stop. */
  setTransport(transport: MessageTransport | undefined): void;
  /** A message arrived for one of the technology's endpoints (TextMessageReceived). NotFoundError for an unknown endpoint. */
  receive(message: TextMessage, resource: string): void;
  /**
   * Runs the dialplan for a received message (an endpoint's `message_context`) on a channel of its
   * own where MESSAGE() and MESSAGE_DATA() read it. UnavailableError when too many run at once.
   */
  runDialplan(message: TextMessage, location: { readonly context: string; readonly exten: string }): void;
}

export interface EnterApplicationOptions {
  /** The application's arguments as written after `app,` in Stasis(app,args). */
  readonly args?: string;
  /** Variables the technology sets on the channel, reported in `channelvars`. */
  readonly technologyVariables?: Readonly<Record<string, string>>;
  /** Variables from the request (ARI `variables`), set after the technology's. */
  readonly variables?: readonly VariableAssignment[];
}

/** One call of a technology's dialplan function: the channel it runs on (none for a global write) and its arguments. */
export interface TechnologyFunctionCall {
  readonly channel: Channel | undefined;
  /** The argument text between the parentheses, after substitution. */
  readonly args: string;
}

/**
 * A dialplan function a technology provides (Asterisk's ast_custom_function_register). The
 * dialplan's registry above the kernel takes it as it takes its own functions.
 */
export interface TechnologyFunction {
  /** Upper case; names compare case-insensitively. Must not be taken. */
  readonly name: string;
  /** How it is called, e.g. `HEADER(name)`. */
  readonly syntax: string;
  /** One line for the docs. */
  readonly summary: string;
  /** The title of the docs' section it is listed under (the technology's). */
  readonly docsSection: string;
  /** The value, or undefined when the read fails: substituted as nothing. */
  read?(call: TechnologyFunctionCall): string | undefined;
  /** Throws InvalidError when the value or arguments cannot be written. */
  write?(call: TechnologyFunctionCall, value: string): void;
}

/** What the dialplan executor does after an application: next priority, already moved, or end. */
export type ApplicationOutcome = 'next' | 'jump' | 'stop';

/** A dialplan application a technology provides (Asterisk's ast_register_application). */
export interface TechnologyApplication {
  readonly name: string;
  /** One line for the list of supported applications. */
  readonly synopsis?: string;
  /** `args` is the data after substitution, split on commas; `rawData` the same unsplit. */
  execute(channel: Channel, args: string[], services: { readonly log: Logger }, rawData: string): Promise<ApplicationOutcome> | ApplicationOutcome;
}

/** Transfers a technology carries out for its far end (SIP REFER, INVITE with Replaces). */
export interface TechnologyTransfers {
  /**
   * The peer of `transferer` runs the dialplan at `destination`; the transferer is hung up.
   * `transfereeVariables` are set on the transferee first (what the protocol tells its dialplan).
   */
  blind(transferer: Channel, destination: Pick<DialplanLocation, 'context' | 'exten'>, transfereeVariables?: ReadonlyArray<readonly [string, string]>): TransferResult;
  /**
   * Asterisk's default blind transfer from an application's bridge: a Local channel to
   * `destination` takes the transferer's seat (stasis-bridge-transfer.ts); the transferer stays in
   * its application.
   */
  blindInStasisBridge(
    transferer: Channel,
    destination: Pick<DialplanLocation, 'context' | 'exten'>,
    variables?: ReadonlyArray<readonly [string, string]>,
  ): StasisBridgeTransferOutcome;
  /**
   * The peers of the transferer's two legs are connected. Between two Dial() calls the first peer
   * moves next to the second and both legs are hung up; when a leg is in an application's bridge,
   * a Local pair takes both legs' seats (stasis-bridge-attended.ts), the second leg is hung up and
   * a first leg in an application stays there.
   */
  attended(firstLeg: Channel, secondLeg: Channel): TransferResult;
  /** Whether `leg` is in a bridge (an application's, or a Dial() call) an attended transfer can link from. */
  canLink(leg: Channel): boolean;
  /** Whether `existing` is in a call another channel could take its place in. */
  canReplace(existing: Channel): boolean;
  /** `replacement` takes `existing`'s place in its call, `existing` is hung up; false when it is in none. */
  replace(existing: Channel, replacement: Channel): boolean;
}

export interface TechnologyMusicOnHold {
  start(channel: Channel, musicClass?: string): void;
  stop(channel: Channel): void;
}

/**
 * The extension states of the dialplan's hints, for technologies that publish them (SIP
 * SUBSCRIBE for `dialog` and `presence`, as res_pjsip_exten_state).
 */
export interface TechnologyExtensionStates {
  /** The hint `exten@context` finds as written, undefined when it has none. */
  hint(context: string, exten: string): string | undefined;
  /** The state of `exten@context` from its hint (UNKNOWN without one). */
  state(context: string, exten: string): ExtensionState;
  /** Called on each change of a hint's state; returns the unsubscribe. Listeners left are removed when the technology stops. */
  onChange(listener: (change: ExtensionStateChange) => void): () => void;
}

/** Message counts of the mailboxes ARI maintains (`PUT /mailboxes/{name}`), for message-waiting indications. */
export interface TechnologyMailboxes {
  /** The counts of a mailbox; undefined when there is none. */
  get(name: string): MailboxSnapshot | undefined;
  /**
   * Sets a mailbox's counts (made when new), as ARI's PUT does: what an external voicemail tells in
   * an MWI NOTIFY (Asterisk's ast_publish_mwi_state). False when they could not be stored (max_mailboxes reached).
   */
  publish(name: string, oldMessages: number, newMessages: number): boolean;
  /** Called with the name of each mailbox set or deleted; returns the unsubscribe. Removed when the technology stops. */
  onChange(listener: (name: string) => void): () => void;
}

/** The pickup extension and the pickup it starts (Asterisk's ast_pickup_call). */
export interface TechnologyPickup {
  /** The extension that picks up (empty: none), as features.conf says now. */
  readonly extension: string;
  /** Picks up a ringing call of the channel's pickup groups; false (after the fail sound, if any) when none. */
  call(channel: Channel): Promise<boolean>;
}

/** What the core gives a technology when it starts. */
export interface TechnologyContext {
  readonly channels: TechnologyChannels;
  /** The one media clock: technologies deliver received frames on its ticks. */
  readonly media: MediaEngine;
  readonly log: Logger;
  readonly config: PatchbayConfig;
  /** Runs the dialplan on the channel, at `location` when given, else where the channel is. */
  enterDialplan(channel: Channel, location?: Partial<DialplanLocation>): void;
  /**
   * Puts the channel into a Stasis application, as Stasis() or originate does: the application
   * is subscribed to it, the variables are set and StasisStart is raised. When the application is
   * not registered the channel is hung up and false is returned.
   */
  enterApplication(channel: Channel, app: string, options?: EnterApplicationOptions): boolean;
  /** Raises ChannelTransfer for a transfer request received on `channel` (with its bridge and peer). */
  raiseTransfer(channel: Channel, request: TransferRequest): void;
  /** Transfers in two-party calls (Dial), with BridgeBlindTransfer / BridgeAttendedTransfer: see call-transfers.ts. */
  readonly transfers: TechnologyTransfers;
  /** Music on hold on a channel (a held party hears it); nothing when music on hold is not running. */
  readonly musicOnHold: TechnologyMusicOnHold;
  /** Call pickup as a phone dialing the pickup extension does it (features.conf pickupexten; call-pickup.ts). */
  readonly pickup: TechnologyPickup;
  readonly endpoints: TechnologyEndpoints;
  readonly messages: TechnologyMessages;
  readonly configObjects: TechnologyConfigObjects;
  /**
   * Adds a dialplan function to this core's dialplan, until the technology stops. Throws when the
   * name is taken.
   */
  registerFunction(fn: TechnologyFunction): void;
  /** Adds a dialplan application to this core's dialplan, until the technology stops. */
  registerApplication(application: TechnologyApplication): void;
  /** Whether the dialplan has `exten` in `context` (priority 1), as it stands now. */
  extensionExists(context: string, exten: string): boolean;
  /** Whether `exten` matches in `context` now or could after more digits (Asterisk's canmatch). */
  extensionCanMatch(context: string, exten: string): boolean;
  /** Extensions the technology adds while running (a regcontext's), kept across dialplan reloads. */
  readonly dialplanExtensions: RuntimeExtensions;
  readonly extensionStates: TechnologyExtensionStates;
  readonly mailboxes: TechnologyMailboxes;
}
