// The contract of a dialplan function (CALLERID, CUT, DB, ...) and what functions may use from the
// core. The core attaches the services to its function registry, so every path that reads or writes a
// function on a channel (substitution, Set(), ARI getChannelVar/setChannelVar, originate
// variables) sees the same astdb, globals and dialplan.
import type { Channel } from '../core/channels/channel.ts';
import { InvalidError } from '../core/errors.ts';
import type { AstDb } from '../core/astdb.ts';
import type { Dialplan } from '../dialplan/dialplan.ts';
import type { DeviceStates } from '../core/device-states.ts';
import type { ExtensionStates } from '../core/extension-states.ts';
import type { GlobalVariables } from '../core/global-vars.ts';
import type { CallRecords } from '../core/cdr/call-records.ts';
import type { HangupHandlers } from './hangup-handlers.ts';

export interface FunctionServices {
  readonly globals: GlobalVariables;
  dialplan(): Dialplan;
  /** A variable as the dialplan sees it (channel, inherited, built-in, global). */
  variable(channel: Channel, name: string): string | undefined;
  /** A live channel by name or id (SHARED(var,channel), HANGUPCAUSE). */
  findChannel(nameOrId: string): Channel | undefined;
  /** Absent until the core's database is open. */
  astdb(): AstDb | undefined;
  readonly deviceStates: DeviceStates;
  readonly extensionStates: ExtensionStates;
  /** Per-channel variables other channels may read and write (SHARED()). */
  readonly shared: WeakMap<Channel, Map<string, string>>;
  /** Call records (CDR(), CDR_PROP()); absent in cores built without them (unit tests). */
  readonly records?: CallRecords;
  /** Hang-up causes of recently ended channels, by channel name (HANGUPCAUSE()). */
  readonly recentHangups: ReadonlyMap<string, { readonly cause: number; readonly linkedId: string }>;
  /** The channels' hang-up handler stacks (CHANNEL(hangup_handler_push)); absent without a dialplan executor. */
  readonly hangupHandlers?: HangupHandlers;
}

/**
 * One call of a function: the channel it runs on, its argument text, and the core's services.
 * ARI's /asterisk/variable calls functions without a channel, as Asterisk does; those that need
 * one then fail (channelOf throws InvalidError).
 */
export interface FunctionCall {
  readonly channel: Channel | undefined;
  /** The argument text between the parentheses, after substitution. */
  readonly args: string;
  /** Undefined for a channel that belongs to no core (unit tests of bare channels). */
  readonly services: FunctionServices | undefined;
}

/** The call's channel; InvalidError for a call without one (ARI's /asterisk/variable). */
export function channelOf(call: FunctionCall, name: string): Channel {
  if (!call.channel) throw new InvalidError(`${name}() needs a channel`);
  return call.channel;
}

export type FunctionCategory = 'logic' | 'string' | 'time' | 'variables' | 'channel' | 'state' | 'astdb' | 'message' | 'records';

/** One declaration per function: the README and docs/dialplan-functions.md are generated from these. */
export interface DialplanFunction {
  /** Upper case, as dialplans conventionally write it (names compare case-insensitively). */
  readonly name: string;
  /** How it is called, e.g. `CUT(varname,delimiter,fields)`. */
  readonly syntax: string;
  /** One line for the docs. */
  readonly summary: string;
  readonly category: FunctionCategory;
  /** The value, or undefined when the read fails (unknown field, bad arguments): substituted as nothing. */
  read?(call: FunctionCall): string | undefined;
  /** Throws InvalidError when the value or arguments cannot be written. */
  write?(call: FunctionCall, value: string): void;
}
