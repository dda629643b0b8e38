// Functions the dialplan executor owns: LOCAL/LOCAL_PEEK live on the Gosub stack (gosub-stack.ts)
// and TIMEOUT on the channel's timers (timeouts.ts). Reads go to those modules; writes go to the
// writers the executor registers on the channel table (TIMEOUT(absolute) needs the executor to
// move the channel to `T`).
import { InvalidError } from '../../core/errors.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';
import { peekLocal, readLocal } from '../gosub-stack.ts';
import { readTimeout } from '../timeouts.ts';

function writeThroughExecutor(name: string) {
  return (call: FunctionCall, value: string): void => {
    const channel = channelOf(call, name);
    const writer = channel.functions.get(name);
    if (!writer) throw new InvalidError(`${name}() is not available`);
    writer(channel, call.args, value);
  };
}

export const executorFunctions: readonly DialplanFunction[] = [
  {
    name: 'LOCAL',
    syntax: 'LOCAL(varname)',
    summary: 'A variable of the current Gosub frame only (it vanishes at Return()).',
    category: 'variables',
    read: (call) => readLocal(channelOf(call, 'LOCAL'), call.args),
    write: writeThroughExecutor('LOCAL'),
  },
  {
    name: 'LOCAL_PEEK',
    syntax: 'LOCAL_PEEK(n,varname)',
    summary: 'A variable as it is n Gosub frames up the stack.',
    category: 'variables',
    read: (call) => peekLocal(channelOf(call, 'LOCAL_PEEK'), call.args),
  },
  {
    name: 'TIMEOUT',
    syntax: 'TIMEOUT(absolute|digit|response)',
    summary: 'The channel\'s timeouts in seconds: absolute (then to the T extension), digit and response (Background/WaitExten).',
    category: 'channel',
    read: (call) => readTimeout(channelOf(call, 'TIMEOUT'), call.args),
    write: writeThroughExecutor('TIMEOUT'),
  },
];
