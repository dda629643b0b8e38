// What a dialed channel takes from the channel that dials it (ast_channel_inherit_variables and
// main/dial.c): `__NAME` variables keep their prefix and go on being inherited, `_NAME` ones arrive
// as NAME; the dialer's identity becomes the connected line; the language and the redirecting
// party follow (app_dial and main/dial.c copy the caller's redirecting onto each callee).
import type { Channel } from './channel.ts';
import { InvalidError } from '../errors.ts';
import { MAX_CHANNEL_VARIABLES } from '../variable-limits.ts';

/**
 * `connectedLine: false` leaves the connected line to the caller of this function (app_dial stages
 * it with the callee's caller id, see Channel.stageIdentity).
 */
export function inheritFromCaller(channel: Channel, caller: Channel, { connectedLine = true }: { readonly connectedLine?: boolean } = {}): void {
  for (const name of caller.variableNames()) {
    const value = caller.getVariable(name);
    if (value === undefined || !name.startsWith('_')) continue;
    const inherited = name.startsWith('__') ? name : name.slice(1);
    // A new channel full already (the caller held the most): the rest are not inherited.
    if (channel.variableCount >= MAX_CHANNEL_VARIABLES && channel.getVariable(inherited) === undefined) break;
    try {
      channel.setVariable(inherited, value);
    } catch (error) {
      // Full in bytes (variables.max_channel_bytes): the rest are not inherited either.
      if (error instanceof InvalidError) break;
      throw error;
    }
  }
  if (connectedLine) channel.connectedPresentation = caller.callerPresentation;
  if (connectedLine && (caller.caller.name || caller.caller.number)) channel.setConnected({ ...caller.caller });
  channel.language = caller.language;
  channel.redirecting = caller.redirecting;
}
