// PJSIP_HEADER(S) and PJSIP_RESPONSE_HEADER(S) (res_pjsip_header_funcs): the headers of the INVITE that created
// an inbound PJSIP channel, and headers to add to the INVITE of an outbound one (set in a Dial
// pre-dial handler `b()`, or as an ARI originate/create variable). The list itself belongs to the
// channel's SIP call (call.ts); what may be added is bounded there (headers.ts). The response
// functions read the 200 OK that answered an outbound channel's INVITE. The technology registers
// them with the core's dialplan when it starts (dialplan.ts).
import type { Channel } from '../../core/channels/channel.ts';
import type { TechnologyFunction, TechnologyFunctionCall } from '../../core/channels/technology.ts';
import type { SessionHeaders } from './headers.ts';
import { InvalidError } from '../../core/errors.ts';
import { splitArgs } from '../../dialplan/args.ts';
import { SipCall } from './call.ts';
import { sessionFunctions } from './session-functions.ts';
import { transferHandlingFunction } from './transfer-handling.ts';

/** Where the functions are listed in docs/dialplan-functions.md. */
const DOCS_SECTION = 'SIP headers';

/** The call's channel; InvalidError for a call without one (ARI's /asterisk/variable). */
function channelOf(call: TechnologyFunctionCall, name: string): Channel {
  if (!call.channel) throw new InvalidError(`${name}() needs a channel`);
  return call.channel;
}

/** The SIP call driving a channel; InvalidError for a channel that is not PJSIP ("requires a PJSIP channel"). */
function sipCallOf(channel: Channel, name: string): SipCall {
  if (!(channel.driver instanceof SipCall)) throw new InvalidError(`${name}() requires a PJSIP channel`);
  return channel.driver;
}

/** The channel's header list. */
function headersOf(channel: Channel, name: string): SessionHeaders {
  return sipCallOf(channel, name).sipHeaders();
}

interface HeaderArgs {
  readonly action: string;
  readonly name: string;
  readonly number: number;
}

/** `action,name[,number]`: number defaults to 1, and anything below 1 counts as 1, as in Asterisk. */
function parseArgs(call: TechnologyFunctionCall): HeaderArgs {
  const [action = '', name = '', number] = splitArgs(call.args).map((part) => part.trim());
  if (action === '') throw new InvalidError('PJSIP_HEADER() requires an action');
  if (name === '') throw new InvalidError('PJSIP_HEADER() requires a header name');
  const parsed = number === undefined || number === '' ? 1 : Number.parseInt(number, 10);
  return { action: action.toLowerCase(), name, number: Number.isFinite(parsed) && parsed >= 1 ? Math.min(parsed, 1_000_000) : 1 };
}

/** The 200 OK's headers of an outbound PJSIP channel; undefined before the answer (a failed read). */
function responseHeadersOf(channel: Channel, name: string): SessionHeaders | undefined {
  return sipCallOf(channel, name).sipResponseHeaders();
}

export const sipFunctions: readonly TechnologyFunction[] = [
  {
    name: 'PJSIP_HEADER',
    syntax: 'PJSIP_HEADER(read|add|update|remove,name[,number])',
    summary:
      'read: occurrence number (default 1) of a header of the INVITE that created the inbound channel (`X-*` matches a prefix); add/update/remove: headers of the outbound channel\'s INVITE (set them in a Dial b() pre-dial handler or as originate variables); remove (`X-*`, `*`) also reads, giving how many went.',
    docsSection: DOCS_SECTION,
    read(call) {
      const args = parseArgs(call);
      const headers = headersOf(channelOf(call, 'PJSIP_HEADER'), 'PJSIP_HEADER');
      if (args.action === 'read') return headers.read(args.name, args.number);
      if (args.action === 'remove') return String(headers.remove(args.name));
      throw new InvalidError(`Unknown action '${args.action.slice(0, 32)}' is not valid, must be 'read' or 'remove'`);
    },
    write(call, value) {
      const args = parseArgs(call);
      const headers = headersOf(channelOf(call, 'PJSIP_HEADER'), 'PJSIP_HEADER');
      switch (args.action) {
        case 'add':
          headers.add(args.name, value);
          return;
        case 'update':
          headers.update(args.name, args.number, value);
          return;
        case 'remove':
          headers.remove(args.name);
          return;
        default:
          throw new InvalidError(`Unknown action '${args.action.slice(0, 32)}' is not valid, must be 'add', 'update', or 'remove'`);
      }
    },
  },
  {
    name: 'PJSIP_HEADERS',
    syntax: 'PJSIP_HEADERS([prefix])',
    summary: 'The names of the headers of the INVITE (beginning with prefix, e.g. `X-`), comma-separated, each once.',
    docsSection: DOCS_SECTION,
    read(call) {
      const headers = headersOf(channelOf(call, 'PJSIP_HEADERS'), 'PJSIP_HEADERS');
      const prefix = call.args.trim();
      const names = headers.names(prefix);
      // Asterisk: no match for a given prefix is a failed read; no headers at all is empty.
      if (names.length === 0 && prefix !== '') return undefined;
      return names.join(',');
    },
  },
  {
    name: 'PJSIP_RESPONSE_HEADER',
    syntax: 'PJSIP_RESPONSE_HEADER(read,name[,number])',
    summary: 'Occurrence number (default 1) of a header of the 200 OK that answered the outbound channel\'s INVITE (`X-*` matches a prefix).',
    docsSection: DOCS_SECTION,
    read(call) {
      const args = parseArgs(call);
      if (args.action !== 'read') throw new InvalidError(`Unknown action '${args.action.slice(0, 32)}' is not valid, must be 'read'`);
      return responseHeadersOf(channelOf(call, 'PJSIP_RESPONSE_HEADER'), 'PJSIP_RESPONSE_HEADER')?.read(args.name, args.number);
    },
  },
  {
    name: 'PJSIP_RESPONSE_HEADERS',
    syntax: 'PJSIP_RESPONSE_HEADERS(prefix)',
    summary: 'The names of the headers of that 200 OK beginning with prefix, comma-separated, each once.',
    docsSection: DOCS_SECTION,
    read(call) {
      const prefix = call.args.trim();
      if (prefix === '') throw new InvalidError('PJSIP_RESPONSE_HEADERS() requires a pattern');
      const names = responseHeadersOf(channelOf(call, 'PJSIP_RESPONSE_HEADERS'), 'PJSIP_RESPONSE_HEADERS')?.names(prefix) ?? [];
      return names.length === 0 ? undefined : names.join(',');
    },
  },
  transferHandlingFunction,
  ...sessionFunctions,
];
