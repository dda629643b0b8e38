// Call control of one channel as ARI exposes it: the lookups and state guards every operation
// shares, hangup causes, continue targets, variable reads and writes, redirect and mute. The
// checks and their messages follow Asterisk's res/ari/resource_channels.c.
import type { Dialplan } from '../dialplan/dialplan.ts';
import { InvalidError, NotFoundError, StateError, UnprocessableError } from '../core/errors.ts';
import { parseFunctionCall } from '../pbx/function-registry.ts';
import type { Pbx } from '../pbx/pbx.ts';
import type { Stasis } from '../core/stasis.ts';
import { CAUSE, REASON_CAUSES } from '../core/channels/causes.ts';
import type { Channel, DialplanLocation } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import { checkVariableName, MAX_CHANNEL_VARIABLES, tooManyChannelVariables } from '../core/variable-limits.ts';
import { resolveLabel, setChannelVariable, splitEndpoint } from './originate.ts';

/** The channel with this id (or name); NotFoundError otherwise. */
export function findChannel(channels: Channels, idOrName: string, message = 'Channel not found'): Channel {
  const channel = channels.get(idOrName);
  if (!channel) throw new NotFoundError(message);
  return channel;
}

/** The channel, which must be under the control of a Stasis application (ConflictError otherwise). */
export function findControlled(channels: Channels, stasis: Stasis, idOrName: string): Channel {
  const channel = findChannel(channels, idOrName);
  stasis.require(channel);
  return channel;
}

/** A channel under Stasis control in a state that allows call control and media (404, 409, 412). */
export function findControllable(core: { readonly channels: Channels; readonly stasis: Stasis }, idOrName: string): Channel {
  const channel = findControlled(core.channels, core.stasis, idOrName);
  requireValidState(channel);
  return channel;
}

/**
 * Operations that change the channel's state, play to it or move it in the dialplan need a
 * channel that is not an unanswered outbound one: Down, Rsrvd and Ringing are refused (an
 * inbound channel in Ring is fine). StateError otherwise.
 */
export function requireValidState(channel: Channel): void {
  if (channel.state === 'Down' || channel.state === 'Rsrvd' || channel.state === 'Ringing') {
    throw new StateError('Channel in invalid state');
  }
}

/** The hangup cause for ARI's `reason` / `reason_code` (mutually exclusive; none means normal clearing). */
export function hangupCause(reason: string | undefined, reasonCode: string | undefined): number {
  if (reason && reasonCode) throw new InvalidError("The reason and reason_code can't both be specified");
  if (reasonCode) {
    const numeric = /^\s*[+-]?\d+/.exec(reasonCode);
    if (!numeric) throw new InvalidError('Invalid reason for hangup reason code provided');
    return Number.parseInt(numeric[0], 10);
  }
  if (reason) {
    const cause = REASON_CAUSES[reason];
    if (cause === undefined) throw new InvalidError('Invalid reason for hangup reason provided');
    return cause;
  }
  return CAUSE.normal;
}

export interface ContinueRequest {
  readonly context?: string;
  readonly extension?: string;
  readonly priority?: number;
  readonly label?: string;
}

/**
 * Where `continue` sends the channel: without a context it stays in its context (at `extension`
 * or its current extension); a context without an extension means `s`; a label names the
 * priority (as in originate); with nothing at all it moves to the next priority; otherwise
 * `priority`, or 1.
 */
export function continueTarget(dialplan: Dialplan, channel: Channel, request: ContinueRequest): Pick<DialplanLocation, 'context' | 'exten' | 'priority'> {
  const context = request.context || channel.location.context;
  const exten = request.context ? request.extension || 's' : request.extension || channel.location.exten;
  let priority: number;
  if (request.label) priority = resolveLabel(dialplan, context, exten, request.label, channel.caller.number || undefined);
  else if (request.priority) priority = request.priority;
  else if (!request.context && !request.extension) priority = channel.location.priority + 1;
  else priority = 1;
  return { context, exten, priority };
}

/**
 * Hands a controlled channel back to the dialplan at the place `continue` names (see
 * continueTarget); it leaves its application (StasisEnd) on the way.
 */
export function continueInDialplan(core: { readonly stasis: Stasis; readonly dialplan: Dialplan }, channel: Channel, request: ContinueRequest): void {
  core.stasis.continue(channel, continueTarget(core.dialplan, channel, request));
}

/**
 * Reads a variable as getChannelVar does: a name ending in `)` is a dialplan function (an unknown
 * one is InvalidError); otherwise channel variables, built-ins and globals, NotFoundError when unset.
 */
export function readVariable(pbx: Pbx, channel: Channel, name: string): string {
  checkVariableName(name);
  if (name.endsWith(')')) {
    const call = parseFunctionCall(name);
    const value = call ? pbx.readFunction(channel, call[0], call[1]) : undefined;
    if (value === undefined) throw new InvalidError('Unable to read provided function');
    return value;
  }
  const value = pbx.variable(channel, name);
  if (value === undefined) throw new NotFoundError('Provided variable was not found');
  return value;
}

/** Writes a variable or function as setChannelVar does; a failing write is InvalidError. */
export function writeVariable(channel: Channel, name: string, value: string | undefined, reportEvents = false): void {
  if (name === '') throw new InvalidError('Variable name is required');
  // A new plain variable on a full channel: said as it is (not as a function that failed).
  if (value !== undefined && !name.endsWith(')') && channel.variableCount >= MAX_CHANNEL_VARIABLES && channel.getVariable(name) === undefined) {
    throw tooManyChannelVariables(name);
  }
  try {
    setChannelVariable(channel, name, value, reportEvents);
  } catch (error) {
    if (error instanceof InvalidError) throw new InvalidError(`Failed to execute function: ${error.message}`);
    throw error;
  }
}

/**
 * Redirects the channel's far end to another endpoint of the same technology. A malformed
 * endpoint or another technology is UnprocessableError, as is a technology that cannot redirect.
 */
export function redirect(channel: Channel, endpoint: string): void {
  if (endpoint === '') throw new InvalidError("Required parameter 'endpoint' not provided.");
  const target = splitEndpoint(endpoint);
  if (!target) {
    if (endpoint.indexOf('/') > 0) throw new UnprocessableError(`No resource provided in endpoint parameter '${endpoint}'`);
    throw new UnprocessableError(`Endpoint parameter '${endpoint}' does not contain tech/resource`);
  }
  if (target.technology.toLowerCase() !== channel.technology.toLowerCase()) {
    throw new UnprocessableError(`Endpoint technology '${target.technology}' does not match channel technology '${channel.technology}'`);
  }
  if (!channel.driver.redirect) throw new UnprocessableError(`Channel technology '${channel.technology}' cannot redirect`);
  channel.driver.redirect(target.resource);
}

export type MuteDirection = 'in' | 'out' | 'both';

/** Mutes or unmutes audio from the far end (`in`), towards it (`out`), or both. */
export function setMuted(channel: Channel, direction: MuteDirection, muted: boolean): void {
  if (direction === 'in' || direction === 'both') channel.mutedIn = muted;
  if (direction === 'out' || direction === 'both') channel.mutedOut = muted;
}
