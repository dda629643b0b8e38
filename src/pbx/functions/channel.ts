// Functions about the channel itself: CALLERID, CONNECTEDLINE, CHANNEL, HANGUPCAUSE(_KEYS) and
// the writable functions other subsystems provide on the core's registry (TALK_DETECT).
import type { CallerId, Channel } from '../../core/channels/channel.ts';
import { causeText } from '../../core/channels/causes.ts';
import { InvalidError } from '../../core/errors.ts';
import { getToneZone, toneZoneCountries } from '../../media/tonezones.ts';
import { checkVariableValue } from '../../core/variable-limits.ts';
import { formatGroupNames, formatGroupNumbers, parseGroupNames, parseGroupNumbers } from '../../core/channels/call-groups.ts';
import {
  bothPresentation, combinedPresentation, namePresentation, numberPresentation, parsePresentation, presentationName, PRESENTATION_ALLOWED,
  withNamePresentation, withNumberPresentation, type PartyPresentation,
} from '../../core/channels/presentation.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';

const ANI_VARIABLE = '__CALLER_ANI';
const ANI_NAME_VARIABLE = '__CALLER_ANI_NAME';
const DNID_VARIABLE = '__CALLER_DNID';

function formatAll(party: CallerId): string {
  return party.name ? `"${party.name}" <${party.number}>` : party.number;
}

/** A party's field; `presentation` (presentation.ts) answers pres, name-pres and num-pres. */
export function partyField(party: CallerId, field: string, presentation: PartyPresentation = PRESENTATION_ALLOWED): string | undefined {
  const shown = presentationField(party, presentation, field);
  if (shown !== undefined) return shown;
  switch (field.trim().toLowerCase()) {
    case 'name':
      return party.name;
    case 'num':
    case 'number':
      return party.number;
    case 'all':
    case '':
      return formatAll(party);
    case 'name-valid':
      return party.name === '' ? '0' : '1';
    case 'num-valid':
      return party.number === '' ? '0' : '1';
    case 'tag':
    case 'subaddr':
    case 'name-charset':
      return '';
    case 'ton':
    case 'num-plan':
      return '0';
    default:
      return undefined;
  }
}

/** Which presentation a field names, as func_callerid reads `pres[entation]` after name- or num[ber]-. */
function presentationPart(field: string): 'both' | 'name' | 'number' | undefined {
  const [first = '', second, extra] = field.trim().toLowerCase().split('-');
  if (extra !== undefined) return undefined;
  if (second === undefined) return first.startsWith('pres') ? 'both' : undefined;
  if (!second.startsWith('pres')) return undefined;
  if (first === 'name') return 'name';
  return first.startsWith('num') ? 'number' : undefined;
}

function presentationField(party: CallerId, presentation: PartyPresentation, field: string): string | undefined {
  switch (presentationPart(field)) {
    case 'both':
      // A name or number never given does not count (ast_party_id_presentation's valid flags).
      return presentationName(combinedPresentation(presentation, party.name !== '', party.number !== ''));
    case 'name':
      return presentationName(namePresentation(presentation));
    case 'number':
      return presentationName(numberPresentation(presentation));
    default:
      return undefined;
  }
}

/**
 * The party's presentation after writing `value` to `field` (pres sets both name and number), or
 * undefined when `field` is not a presentation. A value that is neither a name nor a number is
 * refused and the presentation stays, as func_callerid logs it and leaves it unchanged.
 */
function writtenPresentation(name: string, presentation: PartyPresentation, field: string, value: string): PartyPresentation | undefined {
  const part = presentationPart(field);
  if (part === undefined) return undefined;
  const parsed = parsePresentation(value);
  if (parsed === undefined) throw new InvalidError(`Unknown ${name} presentation '${value.slice(0, 64)}', value unchanged`);
  if (part === 'name') return withNamePresentation(presentation, parsed);
  if (part === 'number') return withNumberPresentation(presentation, parsed);
  return bothPresentation(parsed);
}

/** Caller fields beyond the party the channel models: ANI and DNID live in variables, RDNIS is the redirecting party's from number (as func_callerid). */
function callerExtra(channel: Channel, field: string): string | undefined {
  switch (field.trim().toLowerCase()) {
    case 'ani':
    case 'ani-num':
      return channel.getVariable(ANI_VARIABLE) ?? channel.caller.number;
    case 'ani-name':
      return channel.getVariable(ANI_NAME_VARIABLE) ?? channel.caller.name;
    case 'dnid':
    case 'dnid-num':
      return channel.getVariable(DNID_VARIABLE) ?? '';
    case 'rdnis':
      return channel.redirecting.from.number;
    case 'tag':
      return channel.callerTag;
    default:
      return undefined;
  }
}

const CALLER_EXTRA_VARIABLES: ReadonlyMap<string, string> = new Map([
  ['ani', ANI_VARIABLE],
  ['ani-num', ANI_VARIABLE],
  ['ani-name', ANI_NAME_VARIABLE],
  ['dnid', DNID_VARIABLE],
  ['dnid-num', DNID_VARIABLE],
]);

/** What writing `CALLERID(field)` changes; `all` takes `"Name" <number>`. */
export function parseParty(name: string, field: string, value: string): Partial<CallerId> {
  switch (field.trim().toLowerCase()) {
    case 'name':
      return { name: value };
    case 'num':
    case 'number':
      return { number: value };
    case 'all':
    case '': {
      const match = /^\s*"?([^"<]*?)"?\s*<([^>]*)>\s*$/.exec(value);
      return match ? { name: match[1], number: match[2] } : { number: value };
    }
    default:
      throw new InvalidError(`Unknown ${name} field: ${field.slice(0, 64)}`);
  }
}

/** CHANNEL() fields that read a property; the writable ones are in CHANNEL_WRITERS. */
const CHANNEL_READERS: ReadonlyMap<string, (channel: Channel) => string> = new Map<string, (channel: Channel) => string>([
  ['name', (channel) => channel.name],
  ['uniqueid', (channel) => channel.id],
  ['linkedid', (channel) => channel.linkedId],
  ['state', (channel) => channel.state],
  ['language', (channel) => channel.language],
  ['accountcode', (channel) => channel.accountcode],
  ['channeltype', (channel) => channel.technology],
  ['context', (channel) => channel.location.context],
  ['exten', (channel) => channel.location.exten],
  ['priority', (channel) => String(channel.location.priority)],
  ['hangupcause', (channel) => String(channel.hangupCause ?? 0)],
  // The core's own audio is signed linear; a technology says when its wire differs.
  ['audionativeformat', (channel) => channel.driver.nativeFormat?.() ?? 'slin'],
  ['musicclass', (channel) => channel.getVariable('__MUSICCLASS') ?? 'default'],
  ['onhold', (channel) => (channel.onHold ? '1' : '0')],
  ['endpoint', (channel) => channel.endpointId ?? ''],
  ['tonezone', (channel) => channel.toneZone ?? ''],
  ['callgroup', (channel) => formatGroupNumbers(channel.groups.callGroup)],
  ['pickupgroup', (channel) => formatGroupNumbers(channel.groups.pickupGroup)],
  ['namedcallgroup', (channel) => formatGroupNames(channel.groups.namedCallGroups)],
  ['namedpickupgroup', (channel) => formatGroupNames(channel.groups.namedPickupGroups)],
]);

const CHANNEL_WRITERS: ReadonlyMap<string, (channel: Channel, value: string) => void> = new Map<string, (channel: Channel, value: string) => void>([
  ['language', (channel, value) => void (channel.language = value)],
  ['accountcode', (channel, value) => void (channel.accountcode = value)],
  ['musicclass', (channel, value) => channel.setSystemVariable('__MUSICCLASS', value)],
  ['tonezone', (channel, value) => void (channel.toneZone = knownToneZone(value))],
  // As func_channel: the value is read as the configuration's groups are (pieces Asterisk skips are skipped).
  ['callgroup', (channel, value) => void (channel.groups = { ...channel.groups, callGroup: parseGroupNumbers(value) })],
  ['pickupgroup', (channel, value) => void (channel.groups = { ...channel.groups, pickupGroup: parseGroupNumbers(value) })],
  ['namedcallgroup', (channel, value) => void (channel.groups = { ...channel.groups, namedCallGroups: parseGroupNames(value) })],
  ['namedpickupgroup', (channel, value) => void (channel.groups = { ...channel.groups, namedPickupGroups: parseGroupNames(value) })],
]);

/** A tone zone's country as CHANNEL(tonezone) takes it: one Patchbay knows, else refused as Asterisk refuses it. */
function knownToneZone(value: string): string {
  const zone = getToneZone(value.trim());
  if (!zone) throw new InvalidError(`Unknown country code '${value.slice(0, 64)}' for tonezone (known: ${toneZoneCountries().join(', ')})`);
  return zone.country;
}

/**
 * The write-only items that change the channel's hang-up handler stack (func_channel's
 * hangup_handler_*): push stacks the value; pop and wipe drop the top one or all first, then push
 * the value if there is one.
 */
const HANGUP_HANDLER_ITEMS = new Set(['hangup_handler_push', 'hangup_handler_pop', 'hangup_handler_wipe']);

function writeHangupHandler(call: FunctionCall, item: string, value: string): void {
  const channel = channelOf(call, 'CHANNEL');
  const handlers = call.services?.hangupHandlers;
  if (!handlers) throw new InvalidError('Hang-up handlers need the dialplan executor');
  if (item === 'hangup_handler_push') handlers.push(channel, value);
  else if (item === 'hangup_handler_pop') handlers.pop(channel, value);
  else handlers.wipe(channel, value);
}

function hangupCauseOf(call: FunctionCall, name: string): number | undefined {
  const recent = call.services?.recentHangups.get(name);
  if (recent) return recent.cause;
  const live = call.services?.findChannel(name) ?? (call.channel?.name === name ? call.channel : undefined);
  return live?.hangupCause;
}

export const channelFunctions: readonly DialplanFunction[] = [
  {
    name: 'CALLERID',
    syntax: 'CALLERID(field)',
    summary: 'The caller: name, num, all ("Name" <num>), ani, ani-name, dnid, rdnis, pres, name-pres, num-pres, tag (an endpoint\'s callerid_tag)...; name, num, all, ani, dnid, rdnis, tag and the presentations (allowed_not_screened ... prohib, unavailable, or a number) are writable; a SIP channel sends a restricted caller as Anonymous (docs/sip.md).',
    category: 'channel',
    read(call) {
      const channel = channelOf(call, 'CALLERID');
      // The tag is the channel's, not the party's (partyField answers CONNECTEDLINE's, which Patchbay keeps none of).
      return callerExtra(channel, call.args) ?? partyField(channel.caller, call.args, channel.callerPresentation);
    },
    write(call, value) {
      const channel = channelOf(call, 'CALLERID');
      const args = call.args;
      if (args.trim().toLowerCase() === 'rdnis') {
        checkVariableValue(`CALLERID(${args})`, value);
        channel.redirecting = { ...channel.redirecting, from: { ...channel.redirecting.from, number: value } };
        return;
      }
      if (args.trim().toLowerCase() === 'tag') {
        checkVariableValue(`CALLERID(${args})`, value);
        channel.callerTag = value;
        return;
      }
      const extra = CALLER_EXTRA_VARIABLES.get(args.trim().toLowerCase());
      if (extra) {
        checkVariableValue(`CALLERID(${args})`, value);
        channel.setSystemVariable(extra, value);
        return;
      }
      // A presentation alone raises no ChannelCallerId: Asterisk compares only name and number.
      const presentation = writtenPresentation('CALLERID', channel.callerPresentation, args, value);
      if (presentation !== undefined) channel.callerPresentation = presentation;
      else channel.setCaller(parseParty('CALLERID', args, value));
    },
  },
  {
    name: 'CONNECTEDLINE',
    syntax: 'CONNECTEDLINE(field)',
    summary: 'The connected party: name, num, all, pres, name-pres, num-pres, tag...; name, num, all and the presentations are writable.',
    category: 'channel',
    read(call) {
      const channel = channelOf(call, 'CONNECTEDLINE');
      return partyField(channel.connected, call.args, channel.connectedPresentation);
    },
    write(call, value) {
      const channel = channelOf(call, 'CONNECTEDLINE');
      const presentation = writtenPresentation('CONNECTEDLINE', channel.connectedPresentation, call.args, value);
      if (presentation !== undefined) channel.connectedPresentation = presentation;
      else channel.setConnected(parseParty('CONNECTEDLINE', call.args, value));
    },
  },
  {
    name: 'CHANNEL',
    syntax: 'CHANNEL(item)',
    summary: 'A channel property: name, uniqueid, linkedid, state, language, accountcode, channeltype, context, exten, priority, hangupcause, audionativeformat, musicclass, onhold, endpoint, tonezone, callgroup, pickupgroup, namedcallgroup, namedpickupgroup, and `<technology>,item`: the channel technology\'s own items (docs/sip.md lists PJSIP\'s, and those a PJSIP channel answers without the prefix: endpoint, aor, contact, rtp,…, rtcp,…); language, accountcode, musicclass, the four groups (`1,3-5`; names comma-separated) and tonezone (a country of the tone zones in force: indications.conf\'s, else the built-in us, uk, de, fr, it, jp) are writable; hangup_handler_push, hangup_handler_pop and hangup_handler_wipe are write-only and change the channel\'s hang-up handler stack (docs/dialplan.md, Hang-up handlers).',
    category: 'channel',
    read(call) {
      const item = call.args.trim().toLowerCase();
      // A technology's own items, CHANNEL(<technology>,item), answered by the channel's driver
      // (Asterisk's func_channel_read); another technology's name reads as nothing.
      const comma = item.indexOf(',');
      const channel = channelOf(call, 'CHANNEL');
      if (comma > 0 && channel.technology.toLowerCase() === item.slice(0, comma).trim()) return channel.driver.channelInfo?.(item.slice(comma + 1).trim());
      // Items a technology answers without its name (chan_pjsip's endpoint, rtp,…, rtcp,…): the
      // technology first, as Asterisk hands the items its core lacks to the channel's technology.
      const own = channel.driver.channelInfo?.(item, true);
      if (own !== undefined || comma > 0) return own;
      return CHANNEL_READERS.get(item)?.(channel);
    },
    write(call, value) {
      const item = call.args.trim().toLowerCase();
      if (HANGUP_HANDLER_ITEMS.has(item)) return writeHangupHandler(call, item, value);
      const writer = CHANNEL_WRITERS.get(item);
      if (!writer) throw new InvalidError(`CHANNEL(${call.args.slice(0, 64)}) cannot be written`);
      writer(channelOf(call, 'CHANNEL'), value);
    },
  },
  {
    name: 'HANGUPCAUSE',
    syntax: 'HANGUPCAUSE(channel,type)',
    summary: 'The hang-up cause of a channel of this call: type ast gives the Q.850 code, tech its text.',
    category: 'channel',
    read(call) {
      const comma = call.args.lastIndexOf(',');
      const name = (comma < 0 ? call.args : call.args.slice(0, comma)).trim();
      const type = comma < 0 ? 'ast' : call.args.slice(comma + 1).trim().toLowerCase();
      const cause = hangupCauseOf(call, name);
      if (cause === undefined) return '';
      if (type === 'ast') return String(cause);
      if (type === 'tech') return causeText(cause);
      return undefined;
    },
  },
  {
    name: 'HANGUPCAUSE_KEYS',
    syntax: 'HANGUPCAUSE_KEYS()',
    summary: 'The names of the channels of this call (same linkedid) whose hang-up cause HANGUPCAUSE can read.',
    category: 'channel',
    read(call) {
      const names: string[] = [];
      const channel = channelOf(call, 'HANGUPCAUSE_KEYS');
      for (const [name, { linkedId }] of call.services?.recentHangups ?? []) if (linkedId === channel.linkedId) names.push(name);
      return names.join(',');
    },
  },
  {
    name: 'TALK_DETECT',
    syntax: 'TALK_DETECT(set|remove)',
    summary: 'Write-only: Set(TALK_DETECT(set)=[silence_ms[,talking_threshold]]) raises ChannelTalkingStarted/Finished; TALK_DETECT(remove) stops.',
    category: 'channel',
    // The media engine registers the setter on the core's registry, which calls it before this.
    write(call) {
      channelOf(call, 'TALK_DETECT');
      throw new InvalidError('Talk detection is not available');
    },
  },
];
