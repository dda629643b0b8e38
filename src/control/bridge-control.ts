// Bridge operations of a Stasis application that involve more than the bridge: a channel joins a
// bridge only when no recording of its own holds it (Asterisk's rule), which is the recordings'
// knowledge. ARI asks for the operation by name here instead of consulting the two itself.
import type { Bridge, MemberOptions } from '../core/bridges/bridge.ts';
import type { Bridges } from '../core/bridges/bridges.ts';
import type { Channel } from '../core/channels/channel.ts';
import { ConflictError } from '../core/errors.ts';
import type { Recordings } from '../core/recordings/recordings.ts';

/** The core subsystems bridge membership needs. */
export interface BridgeControlServices {
  readonly bridges: Bridges;
  readonly recordings: Recordings;
}

/**
 * Adds controlled channels to a bridge with the same options each. None is added when any of them
 * is being recorded on its own (ConflictError), as in Asterisk.
 */
export function addChannelsToBridge(services: BridgeControlServices, bridge: Bridge, channels: readonly Channel[], options: MemberOptions): void {
  if (channels.some((member) => services.recordings.isRecordingChannel(member.id))) throw new ConflictError('Channel is being recorded');
  for (const member of channels) services.bridges.addChannel(bridge, member, options);
}
