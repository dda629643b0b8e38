// The out-of-call message functions (func_msg): MESSAGE and MESSAGE_DATA, on the message a
// `message_context` runs the dialplan for, or the one a dialplan composes for MessageSend().
import { InvalidError } from '../../core/errors.ts';
import type { DialplanFunction, FunctionCall } from '../function-services.ts';
import { readMessageFunction, writeMessageFunction } from '../dialplan-message.ts';

function channelOf(call: FunctionCall) {
  if (!call.channel) throw new InvalidError('a message function needs a channel');
  return call.channel;
}

export const messageFunctions: readonly DialplanFunction[] = [
  {
    name: 'MESSAGE',
    syntax: 'MESSAGE(to|from|body|custom_data)',
    summary: 'A field of the text message the dialplan runs for (message_context) or composes for MessageSend(); writable but for custom_data.',
    category: 'message',
    read: (call) => (call.channel ? readMessageFunction(call.channel, 'MESSAGE', call.args) : undefined),
    write: (call, value) => writeMessageFunction(channelOf(call), 'MESSAGE', call.args, value),
  },
  {
    name: 'MESSAGE_DATA',
    syntax: 'MESSAGE_DATA(header)',
    summary: 'A variable (SIP header) of that message, names compared case-insensitively; writable.',
    category: 'message',
    read: (call) => (call.channel ? readMessageFunction(call.channel, 'MESSAGE_DATA', call.args) : undefined),
    write: (call, value) => writeMessageFunction(channelOf(call), 'MESSAGE_DATA', call.args, value),
  },
];
