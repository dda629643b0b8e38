// Origination as ARI does it: originate (request, dial in the background, then Stasis or the
// dialplan once answered), create (request and place in an application without dialing) and the
// later dial of a created channel. Parameter checks follow Asterisk's res/ari/resource_channels.c.
import type { Logger } from 'pino';
import type { Applications } from '../core/applications.ts';
import { splitArgs } from '../dialplan/args.ts';
import type { Dialplan } from '../dialplan/dialplan.ts';
import { ConflictError, InvalidError, NotFoundError } from '../core/errors.ts';
import { parseFunctionCall, writeChannelFunction } from '../pbx/function-registry.ts';
import type { Pbx } from '../pbx/pbx.ts';
import type { Stasis } from '../core/stasis.ts';
import { CAUSE } from '../core/channels/causes.ts';
import type { CallerId, Channel } from '../core/channels/channel.ts';
import type { Model } from '../spec/index.ts';
import { MAX_CHANNEL_ID_LENGTH, type Channels } from '../core/channels/channels.ts';
import { checkVariable, MAX_CHANNEL_VARIABLES, MAX_VARIABLES_PER_REQUEST, tooManyChannelVariables, tooManyVariableBytes, variableSize, type VariableAssignment } from '../core/variable-limits.ts';
import { dial } from '../core/channels/dialer.ts';
import { inheritFromCaller } from '../core/channels/inherit.ts';
import { KNOWN_CODEC_NAMES } from '../media/codecs.ts';
import { parseCallerId } from '../util/caller-id.ts';

/** What origination needs from the core (the Core itself provides all of it). */
export interface OriginateServices {
  readonly channels: Channels;
  readonly applications: Applications;
  readonly stasis: Stasis;
  readonly pbx: Pbx;
  readonly dialplan: Dialplan;
  readonly log: Logger;
}

/** Seconds an originated call rings before it is given up when no usable timeout is given. */
export const DEFAULT_ORIGINATE_TIMEOUT_S = 30;

export type { VariableAssignment } from '../core/variable-limits.ts';

/**
 * Parses a `variables` body object: `{NAME: "value" | {"value": "...", "report_events": bool}}`.
 * Empty names are skipped, as in Asterisk. Throws InvalidError with Asterisk's messages, and
 * beyond the bounds of variable-limits.ts. Names are only ever read as own keys (`__proto__` and
 * `toString` are names like any other).
 */
export function parseVariables(variables: unknown): VariableAssignment[] {
  if (variables === undefined || variables === null) return [];
  if (typeof variables !== 'object' || Array.isArray(variables)) throw new InvalidError("The 'variables' field must be a JSON object");
  const entries = Object.entries(variables as Record<string, unknown>);
  if (entries.length > MAX_VARIABLES_PER_REQUEST) {
    throw new InvalidError(`Too many variables: ${entries.length} given, at most ${MAX_VARIABLES_PER_REQUEST} are allowed`);
  }
  const assignments: VariableAssignment[] = [];
  for (const [name, entry] of entries) {
    if (name === '') continue;
    checkVariable(name, typeof entry === 'string' ? entry : undefined);
    if (typeof entry === 'string') {
      assignments.push({ name, value: entry, reportEvents: false });
      continue;
    }
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new InvalidError("Each value in 'variables' must be a string or an object with 'value' and optional 'report_events'");
    }
    const value = Object.hasOwn(entry, 'value') ? (entry as { value?: unknown }).value : undefined;
    const reportEvents = Object.hasOwn(entry, 'report_events') ? (entry as { report_events?: unknown }).report_events : undefined;
    if (typeof value !== 'string') throw new InvalidError("Each object value in 'variables' must include string field 'value'");
    checkVariable(name, value);
    if (reportEvents !== undefined && typeof reportEvents !== 'boolean') {
      throw new InvalidError("Field 'report_events' in 'variables' entries must be boolean");
    }
    assignments.push({ name, value, reportEvents: reportEvents === true });
  }
  return assignments;
}

/**
 * Sets a variable, or writes a function when the name ends in `)` (`CALLERID(name)`); a value of
 * undefined unsets a plain variable. Throws InvalidError when a function cannot be written.
 */
export function setChannelVariable(channel: Channel, name: string, value: string | undefined, reportEvents = false): void {
  checkVariable(name, value);
  const call = name.endsWith(')') ? parseFunctionCall(name) : undefined;
  if (name.endsWith(')') && !call) throw new InvalidError(`Invalid function name: ${name}`);
  if (call) writeChannelFunction(channel, call[0], call[1], value ?? '');
  else channel.setVariable(name, value, reportEvents);
}

/** Applies parsed body variables in order; all or none when they would make too many. */
export function applyVariables(channel: Channel, assignments: readonly VariableAssignment[]): void {
  checkRoomForVariables(channel, assignments);
  for (const { name, value, reportEvents } of assignments) setChannelVariable(channel, name, value, reportEvents);
}

/**
 * InvalidError when setting `assignments` would create variables beyond MAX_CHANNEL_VARIABLES or
 * grow them beyond `variables.max_channel_bytes` (function writes such as `CALLERID(name)` create
 * none), so a body is applied whole or not at all.
 */
export function checkRoomForVariables(channel: Channel, assignments: readonly VariableAssignment[], trim = false): void {
  const created = new Set<string>();
  const finalValues = new Map<string, string>();
  for (const assignment of assignments) {
    const name = trim ? assignment.name.trim() : assignment.name;
    if (name.endsWith(')')) continue;
    finalValues.set(name, assignment.value);
    if (channel.getVariable(name) !== undefined) continue;
    created.add(name);
    if (channel.variableCount + created.size > MAX_CHANNEL_VARIABLES) throw tooManyChannelVariables(name);
  }
  const { held, limit } = channel.variableBytes;
  let bytes = held;
  for (const [name, value] of finalValues) {
    const old = channel.getVariable(name);
    bytes += variableSize(name, value) - (old === undefined ? 0 : variableSize(name, old));
  }
  if (bytes > limit && bytes > held) {
    throw tooManyVariableBytes('channel', limit, 'variables.max_channel_bytes', [...finalValues.keys()].pop() ?? '');
  }
}

/** Splits `formats` into names of the codec table; an unknown one is InvalidError. */
export function parseFormats(formats: string): string[] {
  return formats.split(',').map((entry) => {
    const name = entry.trim();
    const known = KNOWN_CODEC_NAMES.find((format) => format === name.toLowerCase());
    if (!known) throw new InvalidError(`Provided format (${name}) was not found`);
    return known;
  });
}

/** `tech/resource` → its two parts; undefined when either is empty. */
export function splitEndpoint(endpoint: string): { technology: string; resource: string } | undefined {
  const slash = endpoint.indexOf('/');
  if (slash <= 0 || slash === endpoint.length - 1) return undefined;
  return { technology: endpoint.slice(0, slash), resource: endpoint.slice(slash + 1) };
}

/** Application arguments as the Stasis() application would receive them from `app,args`. */
export function splitAppArgs(appArgs: string | undefined): string[] {
  return appArgs === undefined || appArgs === '' ? [] : splitArgs(appArgs);
}

/**
 * The priority a `label` names in context/exten: a number is used as it is; otherwise the label
 * is looked up (unknown: NotFoundError). Priority 0 is InvalidError.
 */
export function resolveLabel(dialplan: Dialplan, context: string, exten: string, label: string, callerId?: string): number {
  const numeric = /^\s*[+-]?\d+/.exec(label);
  const priority = numeric ? Number.parseInt(numeric[0], 10) : dialplan.findLabel(context, exten, label, callerId);
  if (priority === undefined) throw new NotFoundError('Requested label can not be found');
  if (priority <= 0) throw new InvalidError('Requested priority is illegal');
  return priority;
}

function checkIdLength(id: string | undefined): void {
  if (id !== undefined && id.length > MAX_CHANNEL_ID_LENGTH) {
    throw new InvalidError(`Uniqueid length exceeds maximum of ${MAX_CHANNEL_ID_LENGTH}`);
  }
}

function checkIdFree(channels: Channels, id: string | undefined): void {
  if (id && channels.get(id)?.id === id) throw new ConflictError('Channel with given unique ID already exists');
}

/** Requests the channel, and hangs everything it created up if setting it up fails. */
function requestChannel(
  services: OriginateServices,
  endpoint: string,
  options: { channelId?: string; otherChannelId?: string; requestor?: Channel; formats?: readonly string[] },
  setUp: (channel: Channel) => void,
): Channel {
  checkIdFree(services.channels, options.channelId);
  checkIdFree(services.channels, options.otherChannelId);
  const channel = services.channels.request(endpoint, {
    ...(options.channelId ? { channelId: options.channelId } : {}),
    ...(options.otherChannelId ? { otherChannelId: options.otherChannelId } : {}),
    ...(options.requestor ? { requestor: options.requestor } : {}),
    ...(options.formats ? { formats: options.formats } : {}),
  });
  // ast_dial's prerun marks the channel it requested (main/dial.c), until an application runs on it.
  channel.setDialplan({ ...channel.location, appName: 'AppDial2', appData: '(Outgoing Line)' });
  try {
    setUp(channel);
  } catch (error) {
    channel.hangup(CAUSE.failure);
    throw error;
  }
  return channel;
}

/**
 * Runs the Stasis application on the channel as ast_pbx_outgoing_app does (through app_stasis):
 * pbx_exec's application (and its restore when it returns) and STASISSTATUS.
 */
function enterApplication(services: OriginateServices, channel: Channel, app: string, appArgs: string | undefined): boolean {
  if (channel.hangingUp) return false;
  const { appName: savedApp, appData: savedData } = channel.location;
  channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: appArgs ? `${app},${appArgs}` : app });
  channel.setSystemVariable('STASISSTATUS', '');
  if (services.stasis.enter(channel, app, splitAppArgs(appArgs))) {
    channel.once('stasis-left', () => {
      channel.setSystemVariable('STASISSTATUS', 'SUCCESS');
      channel.setLocation({ appName: savedApp, appData: savedData });
    });
    return true;
  }
  services.log.warn({ channel: channel.name, app }, 'Stasis application is not registered; hanging the channel up');
  channel.setSystemVariable('STASISSTATUS', 'FAILED');
  channel.hangup(CAUSE.normal);
  return false;
}

export interface OriginateRequest {
  readonly endpoint: string;
  readonly extension?: string;
  readonly context?: string;
  readonly priority?: number;
  readonly label?: string;
  readonly app?: string;
  readonly appArgs?: string;
  readonly callerId?: string;
  /** Seconds: >0 rings that long, -1 forever, anything else 30. */
  readonly timeout?: number;
  /** The body's `variables` object, unparsed. */
  readonly variables?: unknown;
  readonly channelId?: string;
  readonly otherChannelId?: string;
  readonly originator?: string;
  readonly formats?: string;
}

export interface Origination {
  readonly channel: Channel;
  /** The channel as it was when the request was accepted (state Down, before any dialing). */
  readonly snapshot: Model<'Channel'>;
  /** Settles when the call is answered (and handed over) or has failed. */
  readonly outcome: Promise<string>;
}

/**
 * Creates and dials a channel. Once answered it enters `app` (StasisStart with `appArgs`), or runs
 * the dialplan at context/extension/priority. Returns at once; dialing continues in the background.
 */
export function originate(services: OriginateServices, request: OriginateRequest): Origination {
  const assignments = parseVariables(request.variables);
  checkIdLength(request.channelId);
  checkIdLength(request.otherChannelId);
  if (request.endpoint === '') throw new InvalidError('Endpoint must be specified');
  if (request.originator && request.formats) throw new InvalidError("Originator and formats can't both be specified");
  const target = splitEndpoint(request.endpoint);
  if (!target) throw new InvalidError('Invalid endpoint specified');

  const app = request.app || undefined;
  const callerId = request.callerId ? parseCallerId(request.callerId) : undefined;
  let location: { context: string; exten: string; priority: number } | undefined;
  if (!app) {
    if (!request.extension) throw new InvalidError('Application or extension must be specified');
    const context = request.context || 'default';
    let priority = request.priority ?? 1;
    if (request.label) priority = resolveLabel(services.dialplan, context, request.extension, request.label, callerId?.number || undefined);
    if (priority <= 0) throw new InvalidError('Requested priority is illegal');
    location = { context, exten: request.extension, priority };
  }
  const timeout = request.timeout ?? DEFAULT_ORIGINATE_TIMEOUT_S;
  const timeoutMs = timeout > 0 ? timeout * 1000 : timeout === -1 ? 0 : DEFAULT_ORIGINATE_TIMEOUT_S * 1000;
  let originator: Channel | undefined;
  if (request.originator) {
    originator = services.channels.get(request.originator);
    if (!originator) throw new InvalidError('Provided originator channel was not found');
  }
  const formats = request.formats ? parseFormats(request.formats) : undefined;

  const channel = requestChannel(
    services,
    request.endpoint,
    { channelId: request.channelId, otherChannelId: request.otherChannelId, requestor: originator, formats },
    (created) => {
      if (callerId && (callerId.name || callerId.number)) {
        // As Asterisk: the originated leg presents the caller id both as its caller and as the
        // connected party, so the dialplan it runs once answered reads it with CALLERID().
        created.setCaller(callerId);
        created.setConnected(callerId);
      }
      applyVariables(created, assignments);
      if (app) {
        services.applications.subscribeInternal(app, 'channel', created.id);
        if (created.peer) services.applications.subscribeInternal(app, 'channel', created.peer.id);
      }
    },
  );
  const snapshot = channel.snapshot();
  const outcome = dial(channel, { dialstring: target.resource, timeoutMs, reportProgress: true }).then(
    (status) => {
      if (status !== 'ANSWER') {
        if (!channel.hangingUp) channel.hangup(CAUSE.noAnswer);
        return status;
      }
      if (channel.hangingUp) return status;
      if (app) {
        enterApplication(services, channel, app, request.appArgs);
      } else if (location) {
        channel.setLocation(location);
        services.pbx.start(channel);
      }
      return status;
    },
    (error: unknown) => {
      services.log.error({ err: error, channel: channel.name }, 'originate failed');
      if (!channel.hangingUp) channel.hangup(CAUSE.failure);
      return 'CHANUNAVAIL';
    },
  );
  return { channel, snapshot, outcome };
}

export interface CreateRequest {
  readonly endpoint: string;
  readonly app: string;
  readonly appArgs?: string;
  readonly channelId?: string;
  readonly otherChannelId?: string;
  readonly originator?: string;
  readonly formats?: string;
  readonly variables?: unknown;
}

/** What `dialCreated` dials: the part of the endpoint after `TECH/`, remembered per created channel. */
const dialStrings = new WeakMap<Channel, string>();
const dialing = new WeakSet<Channel>();

/**
 * Requests a channel without dialing it and places it in `app` at once (StasisStart while it is
 * Down). It is dialed later with dialCreated.
 */
export function createChannel(services: OriginateServices, request: CreateRequest): Origination {
  const assignments = parseVariables(request.variables);
  checkIdLength(request.channelId);
  checkIdLength(request.otherChannelId);
  if (request.originator && request.formats) throw new InvalidError("Originator and formats can't both be specified");
  if (request.endpoint === '') throw new InvalidError('Endpoint must be specified');
  if (request.app === '') throw new InvalidError('Application must be specified');
  const target = splitEndpoint(request.endpoint);
  if (!target) throw new InvalidError('Invalid endpoint specified');
  // An originator that does not exist is ignored, as in Asterisk.
  const originator = request.originator ? services.channels.get(request.originator) : undefined;
  const formats = !originator && request.formats ? parseFormats(request.formats) : undefined;

  const channel = requestChannel(
    services,
    request.endpoint,
    { channelId: request.channelId, otherChannelId: request.otherChannelId, requestor: originator, formats },
    (created) => {
      services.applications.subscribeInternal(request.app, 'channel', created.id);
      applyVariables(created, assignments);
    },
  );
  if (originator) services.applications.subscribeInternal(request.app, 'channel', originator.id);
  channel.dialable = true;
  dialStrings.set(channel, target.resource);
  const snapshot = channel.snapshot();
  enterApplication(services, channel, request.app, request.appArgs);
  return { channel, snapshot, outcome: Promise.resolve(channel.hangingUp ? 'CHANUNAVAIL' : 'CREATED') };
}

export interface DialCreatedRequest {
  /** The channel the dialed channel inherits variables and identity from (ignored when unknown). */
  readonly caller?: string;
  /** Seconds to ring; 0 or absent rings until answered. */
  readonly timeout?: number;
}

/**
 * Dials a channel made by createChannel, in the background; Dial events report the progress.
 * Throws ConflictError when the channel is not in Stasis, not Down, or was not created.
 */
export function dialCreated(services: OriginateServices, channel: Channel, request: DialCreatedRequest = {}): Promise<string> {
  services.stasis.require(channel);
  const caller = request.caller ? services.channels.get(request.caller) : undefined;
  if (channel.state !== 'Down' && channel.state !== 'Rsrvd') throw new ConflictError("Channel is not in the 'Down' state");
  const dialstring = dialStrings.get(channel);
  if (dialstring === undefined || !channel.dialable) throw new ConflictError('Dialing a channel not created by ARI');
  if (dialing.has(channel)) throw new ConflictError('Channel is already being dialed');
  if (caller && caller !== channel) inheritFromCaller(channel, caller);
  dialing.add(channel);
  const timeoutMs = request.timeout && request.timeout > 0 ? request.timeout * 1000 : 0;
  return dial(channel, { dialstring, timeoutMs, reportProgress: true }).then(
    (status) => {
      if (status !== 'ANSWER' && !channel.hangingUp) channel.hangup(CAUSE.noAnswer);
      return status;
    },
    (error: unknown) => {
      services.log.error({ err: error, channel: channel.name }, 'dial failed');
      if (!channel.hangingUp) channel.hangup(CAUSE.failure);
      return 'CHANUNAVAIL';
    },
  );
}

