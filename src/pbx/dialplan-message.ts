// The out-of-call message a dialplan works on, as Asterisk's message.c gives it: `MESSAGE(to)`,
// `MESSAGE(from)`, `MESSAGE(body)`, `MESSAGE(custom_data)` and `MESSAGE_DATA(<header>)`, readable
// and writable on the channel that runs a `message_context` (the technology attaches the message
// received) and on any other channel (writing creates the message, for MessageSend()).
import type { Channel } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import { InvalidError, UnavailableError } from '../core/errors.ts';
import type { TextMessage } from '../core/messages.ts';

/** A message being composed or read by the dialplan. Variables: Map, names as given (case kept). */
export interface DialplanMessage {
  to: string;
  from: string;
  body: string;
  readonly variables: Map<string, string>;
}

/** Variables one message may carry (MESSAGE_DATA writes beyond it are refused). */
export const MAX_MESSAGE_DATA = 64;
/** Longest text of one message field the dialplan may write. */
export const MAX_MESSAGE_FIELD = 65_536;

const messages = new WeakMap<Channel, DialplanMessage>();

/** Gives the channel the message it runs the dialplan for. */
export function attachMessage(channel: Channel, message: TextMessage): void {
  const variables = new Map<string, string>();
  for (const [name, value] of Object.entries(message.variables)) if (variables.size < MAX_MESSAGE_DATA) variables.set(name, value);
  messages.set(channel, { to: message.to, from: message.from, body: message.body, variables });
}

/** The channel's message, if it has one. */
export function messageOf(channel: Channel): DialplanMessage | undefined {
  return messages.get(channel);
}

function findVariable(message: DialplanMessage, name: string): string | undefined {
  const exact = message.variables.get(name);
  if (exact !== undefined) return exact;
  // SIP header names are case-insensitive.
  const lower = name.toLowerCase();
  for (const [key, value] of message.variables) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/** Reads MESSAGE(field) or MESSAGE_DATA(name); empty when the channel has no message (as Asterisk). */
export function readMessageFunction(channel: Channel, name: string, args: string): string | undefined {
  const message = messages.get(channel);
  const upper = name.toUpperCase();
  if (upper === 'MESSAGE_DATA') return message ? (findVariable(message, args.trim()) ?? '') : '';
  if (upper !== 'MESSAGE') return undefined;
  switch (args.trim().toLowerCase()) {
    case 'to':
      return message?.to ?? '';
    case 'from':
      return message?.from ?? '';
    case 'body':
      return message?.body ?? '';
    case 'custom_data':
      return message ? [...message.variables.keys()].join(',') : '';
    default:
      return undefined;
  }
}

/** Writes MESSAGE(to|from|body) or MESSAGE_DATA(name) (an empty value removes it). */
export function writeMessageFunction(channel: Channel, name: string, args: string, value: string): void {
  if (value.length > MAX_MESSAGE_FIELD) throw new InvalidError(`${name}(${args}) value is too long`);
  let message = messages.get(channel);
  if (!message) {
    message = { to: '', from: '', body: '', variables: new Map() };
    messages.set(channel, message);
  }
  const upper = name.toUpperCase();
  if (upper === 'MESSAGE_DATA') {
    const key = args.trim();
    if (!/^[A-Za-z0-9_.!%*+`'~-]{1,64}$/.test(key)) throw new InvalidError(`MESSAGE_DATA: ${key} is not a header name`);
    const existing = [...message.variables.keys()].find((candidate) => candidate.toLowerCase() === key.toLowerCase());
    if (value === '') {
      if (existing !== undefined) message.variables.delete(existing);
      return;
    }
    if (existing === undefined && message.variables.size >= MAX_MESSAGE_DATA) throw new InvalidError(`MESSAGE_DATA: more than ${MAX_MESSAGE_DATA} headers`);
    message.variables.set(existing ?? key, value);
    return;
  }
  switch (args.trim().toLowerCase()) {
    case 'to':
      message.to = value;
      return;
    case 'from':
      message.from = value;
      return;
    case 'body':
      message.body = value;
      return;
    default:
      throw new InvalidError(`MESSAGE(${args}) cannot be written`);
  }
}

/** Messages whose dialplan runs at once, at most; beyond it a message is refused (UnavailableError). */
export const MAX_MESSAGE_DIALPLANS = 64;

/**
 * Runs the dialplan for received messages, as Asterisk's message queue does: each on a channel of
 * its own (`Message/ast_msg_queue`, all alike, state Up, no media) at `context`/`exten`, priority 1, where
 * MESSAGE() and MESSAGE_DATA() read the message; the channel hangs up when the dialplan ends. One
 * per core, so the bound on messages in the dialplan at once is each server's own.
 */
export class MessageDialplans {
  #running = 0;

  constructor(
    private readonly channels: Pick<Channels, 'create'>,
    private readonly startDialplan: (channel: Channel) => void,
  ) {}

  run(message: TextMessage, location: { readonly context: string; readonly exten: string }): void {
    if (this.#running >= MAX_MESSAGE_DIALPLANS) throw new UnavailableError('Too many messages in the dialplan');
    const channel = this.channels.create({
      // Asterisk's message queue names every such channel alike, without a number.
      name: 'Message/ast_msg_queue',
      technology: 'Message',
      direction: 'inbound',
      state: 'Up',
      location: { context: location.context, exten: location.exten, priority: 1 },
    });
    this.#running++;
    channel.once('hangup', () => this.#running--);
    attachMessage(channel, message);
    this.startDialplan(channel);
  }
}
