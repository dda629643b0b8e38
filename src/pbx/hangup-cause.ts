// The cause a dialplan channel will hang up with when the dialplan ends it without naming one
// (Hangup() with no argument, or falling off the end), as Asterisk keeps it in the channel's
// hangupcause before the hangup: Dial() leaves the cause its callee ended with there, so a phone
// calling a busy number hears 486 Busy, not the 603 of a normal clearing.
import { CAUSE } from '../core/channels/causes.ts';
import type { Channel } from '../core/channels/channel.ts';

const presetCauses = new WeakMap<Channel, number>();

/** Remembers the cause `channel` hangs up with when the dialplan ends it without one. */
export function presetHangupCause(channel: Channel, cause: number): void {
  presetCauses.set(channel, cause);
}

/** The cause to hang `channel` up with when none is given: the preset one, else normal clearing. */
export function defaultHangupCause(channel: Channel): number {
  return presetCauses.get(channel) ?? CAUSE.normal;
}
