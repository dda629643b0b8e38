// Dialplan functions on channels: reading `CALLERID(name)`, `CHANNEL(state)`, ... and writing
// those that can be set (`Set(CALLERID(num)=...)`, ARI setChannelVar on a function name).
import type { Channel } from '../channels/channel.ts';
import { InvalidError } from '../errors.ts';
import { isMessageFunction, readMessageFunction } from './message-functions.ts';

/** `NAME(args)` → [NAME, args], or undefined when `text` is a plain variable name. */
export function parseFunctionCall(text: string): [string, string] | undefined {
  const open = text.indexOf('(');
  if (open <= 0 || !text.endsWith(')')) return undefined;
  return [text.slice(0, open).toUpperCase(), text.slice(open + 1, -1)];
}

function partyField(party: { name: string; number: string }, field: string): string | undefined {
  switch (field.toLowerCase()) {
    case 'name':
      return party.name;
    case 'num':
    case 'number':
      return party.number;
    case 'all':
    case '':
      return party.name ? `"${party.name}" <${party.number}>` : party.number;
    default:
      return undefined;
  }
}

/** Reads a function; undefined when the function or its argument is unknown. */
export function readChannelFunction(channel: Channel, name: string, args: string): string | undefined {
  if (isMessageFunction(name)) return readMessageFunction(channel, name, args);
  switch (name.toUpperCase()) {
    case 'CALLERID':
      return partyField(channel.caller, args);
    case 'CONNECTEDLINE':
      return partyField(channel.connected, args);
    case 'CHANNEL':
      switch (args.toLowerCase()) {
        case 'name':
          return channel.name;
        case 'uniqueid':
          return channel.id;
        case 'linkedid':
          return channel.linkedId;
        case 'state':
          return channel.state;
        case 'language':
          return channel.language;
        case 'accountcode':
          return channel.accountcode;
        case 'channeltype':
          return channel.technology;
        case 'context':
          return channel.location.context;
        case 'exten':
          return channel.location.exten;
        case 'hangupcause':
          return String(channel.hangupCause ?? 0);
        case 'musicclass':
          return channel.getVariable('__MUSICCLASS') ?? 'default';
        default:
          return undefined;
      }
    case 'LEN':
      return String(args.length);
    default:
      return undefined;
  }
}

/** Writes a function; throws InvalidError when it cannot be written. */
export function writeChannelFunction(channel: Channel, name: string, args: string, value: string): void {
  const upper = name.toUpperCase();
  const parseParty = (): { name?: string; number?: string } => {
    const field = args.toLowerCase();
    if (field === 'name') return { name: value };
    if (field === 'num' || field === 'number') return { number: value };
    if (field === 'all' || field === '') {
      const match = /^\s*"?([^"<]*?)"?\s*<([^>]*)>\s*$/.exec(value);
      return match ? { name: match[1], number: match[2] } : { number: value };
    }
    throw new InvalidError(`Unknown ${upper} field: ${args}`);
  };
  switch (upper) {
    case 'CALLERID':
      channel.setCaller(parseParty());
      return;
    case 'CONNECTEDLINE':
      channel.setConnected(parseParty());
      return;
    case 'CHANNEL':
      if (args.toLowerCase() === 'language') {
        channel.language = value;
        return;
      }
      if (args.toLowerCase() === 'accountcode') {
        channel.accountcode = value;
        return;
      }
      if (args.toLowerCase() === 'musicclass') {
        channel.setVariable('__MUSICCLASS', value);
        return;
      }
      throw new InvalidError(`CHANNEL(${args}) cannot be written`);
    default: {
      // Setters other subsystems provide (TALK_DETECT is the media engine's), per channel table.
      const writer = channel.functions.get(upper);
      if (!writer) throw new InvalidError(`Unknown function: ${upper}`);
      writer(channel, args, value);
    }
  }
}

/**
 * Every function name the dialplan can use: those read or written above, GLOBAL (Set writes it),
 * TALK_DETECT (the media engine's writer), and the executor's own LOCAL/LOCAL_PEEK (gosub-stack.ts)
 * and TIMEOUT (timeouts.ts). The load-time check asks this, so a name added to the readers or
 * writers belongs here too.
 */
const KNOWN_FUNCTIONS: ReadonlySet<string> = new Set([
  'CALLERID',
  'CONNECTEDLINE',
  'CHANNEL',
  'LEN',
  'GLOBAL',
  'TALK_DETECT',
  'LOCAL',
  'LOCAL_PEEK',
  'TIMEOUT',
  'MESSAGE',
  'MESSAGE_DATA',
]);

/** Whether the dialplan function `name` (any case) exists. */
export function isKnownDialplanFunction(name: string): boolean {
  return KNOWN_FUNCTIONS.has(name.toUpperCase());
}

/**
 * Functions Patchbay deliberately does not provide because they act outside the server (run
 * programs, write files, fetch URLs); the load-time check names them apart from unknown ones.
 */
export const FUNCTIONS_WITH_OUTSIDE_EFFECTS: ReadonlySet<string> = new Set(['SHELL', 'FILE', 'FILE_COUNT_LINE', 'FILE_FORMAT', 'CURL', 'CURLOPT', 'ODBC', 'ODBC_FETCH']);
