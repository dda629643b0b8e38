// Functions the dialplan executor owns: LOCAL/LOCAL_PEEK live on the Gosub stack (gosub-stack.ts)
// and TIMEOUT on the channel's timers (timeouts.ts). Reads go to those modules; writes go to the
// setters the executor registers on the core's registry (TIMEOUT(absolute) needs the executor to
// move the channel to `T`).
import { InvalidError } from '../../core/errors.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';
import { peekLocal, readLocal } from '../gosub-stack.ts';
import { readTimeout } from '../timeouts.ts';

/**
 * The write of a function whose setter the executor registers on the core's registry, which calls
 * that setter before this: reaching this means the executor is not there.
 */
function writeThroughExecutor(name: string) {
  return (call: FunctionCall): void => {
    channelOf(call, name);
    throw new InvalidError(`${name}() is not available`);
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
