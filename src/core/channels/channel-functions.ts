// The dialplan functions of the core a channel belongs to, as the kernel sees them. The kernel has
// no dialplan of its own: it only carries this table so that code holding a channel reaches its
// own core's functions (two servers in one process never share them). The dialplan floor above
// (src/pbx/function-registry.ts) provides the table; kernel subsystems register the setters they
// own on it (TALK_DETECT is the media engine's).
import type { Channel } from './channel.ts';

export type FunctionWriter = (channel: Channel, args: string, value: string) => void;

export interface ChannelFunctions {
  /** A function's value on the channel; undefined when unknown, unreadable or refused. */
  read(channel: Channel, name: string, args: string): string | undefined;
  /** Writes a function on the channel; InvalidError when it cannot be written. */
  write(channel: Channel, name: string, args: string, value: string): void;
  /** Registers the setter of function `name` (case-insensitive) that a subsystem owns. */
  registerWriter(name: string, writer: FunctionWriter): void;
}
