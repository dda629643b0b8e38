// What a channel needs of the core it belongs to: its table, the core's dialplan functions, where
// its events go, the settings its snapshot and variables follow, and who hears of its indications,
// its end and its failures. The counterpart of driver.ts (what a channel asks of its technology):
// the table implements this one (channels.ts), so the channel's contract with the core is read
// apart from the channel's own code. Generic in the channel, as dialplan-run.ts's HangupLogic, so
// that this file need not import the Channel that names it (channel.ts binds it to Channel).
import type { EventScope } from '../applications.ts';
import type { EventTextSource } from '../application-sink.ts';
import type { CoreEvent } from '../../spec/events.ts';
import type { Indication } from './driver.ts';

/** A setter of one dialplan function on a channel, registered by the subsystem that owns it. */
export type FunctionWriterOf<C> = (channel: C, args: string, value: string) => void;

/**
 * The dialplan functions of the core a channel belongs to, as the kernel sees them. The kernel has
 * no dialplan of its own: it only carries this table so that code holding a channel reaches its
 * own core's functions (two servers in one process never share them). The dialplan floor above
 * (src/pbx/function-registry.ts) provides the table; kernel subsystems register the setters they
 * own on it (TALK_DETECT is the media engine's).
 */
export interface ChannelFunctionsOf<C> {
  /** A function's value on the channel; undefined when unknown, unreadable or refused. */
  read(channel: C, name: string, args: string): string | undefined;
  /** Writes a function on the channel; InvalidError when it cannot be written. */
  write(channel: C, name: string, args: string, value: string): void;
  /** Registers the setter of function `name` (case-insensitive) that a subsystem owns. */
  registerWriter(name: string, writer: FunctionWriterOf<C>): void;
}

/** What a channel needs from the rest of the core. */
export interface ChannelEnvironmentOf<C> {
  /** The table the channel belongs to (the core's Channels); scopes per-core registrations. */
  readonly table: object;
  /** The dialplan functions of the table's core. */
  readonly functions: ChannelFunctionsOf<C>;
  /** `text` makes the event's JSON text when an application needs it (see Channel.eventText). */
  publish(event: CoreEvent, scope: EventScope, text?: EventTextSource): void;
  /** Variables every snapshot carries (the `channelvars` setting). */
  readonly channelvars: readonly string[];
  readonly defaultLanguage: string;
  readonly maxVariableBytes: number; // most bytes of variables the channel holds (`variables.max_channel_bytes`)
  /**
   * An indication the channel's technology could not show (its driver's indicate returned false):
   * the core plays its tone in band, or with `stop` ends it. Absent: nothing is heard.
   */
  inbandIndication?(channel: C, indication: Indication): void;
  /** Called once, after ChannelDestroyed. */
  destroyed(channel: C): void;
  /**
   * The channel's state changed (after its ChannelStateChange, before its own `state` listeners):
   * one hook for every channel of the table, so that a subsystem following every channel's state
   * (derived device states) holds no listener per channel. Absent: nobody is told.
   */
  stateChanged?(channel: C): void;
  /** A listener or technology failed while the channel was being notified; the channel goes on. */
  reportError(error: unknown, channel: C, during: string): void;
}
