// The out-of-call message functions (func_msg): MESSAGE and MESSAGE_DATA, on the message a
// `message_context` runs the dialplan for, or the one a dialplan composes for MessageSend().
import { InvalidError } from '../../core/errors.ts';
import type { DialplanFunction, FunctionCall } from '../function-services.ts';
import { readMessageFunction, writeMessageFunction } from '../dialplan-message.ts';

function channelOf(call: FunctionCall) {
  if (!call.channel) throw new InvalidError('a message function needs a channel');
  return call.channel;
}

/** A message function: a field of the message the channel carries, read and written by name. */
function messageFunction(name: 'MESSAGE' | 'MESSAGE_DATA', syntax: string, summary: string): DialplanFunction {
  return {
    name,
    syntax,
    summary,
    category: 'message',
    read: (call) => (call.channel ? readMessageFunction(call.channel, name, call.args) : undefined),
    write: (call, value) => writeMessageFunction(channelOf(call), name, call.args, value),
  };
}

export const messageFunctions: readonly DialplanFunction[] = [
  messageFunction(
    'MESSAGE',
    'MESSAGE(to|from|body|custom_data)',
    'A field of the text message the dialplan runs for (message_context) or composes for MessageSend(); writable but for custom_data.',
  ),
  messageFunction('MESSAGE_DATA', 'MESSAGE_DATA(header)', 'A variable (SIP header) of that message, names compared case-insensitively; writable.'),
];
