// What a dialed channel takes from the channel that dials it (ast_channel_inherit_variables and
// main/dial.c): `__NAME` variables keep their prefix and go on being inherited, `_NAME` ones arrive
// as NAME; the dialer's identity becomes the connected line; the language follows.
import type { Channel } from './channel.ts';

export function inheritFromCaller(channel: Channel, caller: Channel): void {
  for (const name of caller.variableNames()) {
    const value = caller.getVariable(name);
    if (value === undefined) continue;
    if (name.startsWith('__')) channel.setVariable(name, value);
    else if (name.startsWith('_')) channel.setVariable(name.slice(1), value);
  }
  if (caller.caller.name || caller.caller.number) channel.setConnected({ ...caller.caller });
  channel.language = caller.language;
}
