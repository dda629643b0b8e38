// REDIRECTING(): the channel's redirecting party (core/channels/redirecting.ts) as func_callerid
// reads and writes it. Items are dash-joined: orig-, from- and to- with a party field (name, num,
// all, pres...), reason, orig-reason, count, pres, and priv-orig-/priv-from-/priv-to- (Patchbay
// keeps no private parties: they read as nothing). Each write is indicated to the channel's
// technology (a SIP caller not answered yet gets a 181 with Diversion), unless a second argument
// has `i`, as func_callerid's ast_channel_update_redirecting / ast_channel_set_redirecting.
import type { Channel } from '../../core/channels/channel.ts';
import type { CallerId } from '../../core/channels/channel-types.ts';
import { parseRedirectingReason, redirectingReasonName, type Redirecting } from '../../core/channels/redirecting.ts';
import { InvalidError } from '../../core/errors.ts';
import { checkVariableValue } from '../../core/variable-limits.ts';
import { channelOf, type DialplanFunction } from '../function-services.ts';
import { parseParty, partyField } from './channel.ts';

type PartyName = 'orig' | 'from' | 'to';
const PARTIES: ReadonlySet<string> = new Set(['orig', 'from', 'to']);
/** Presentation as Asterisk names it; Patchbay always presents. */
const PRESENTATION = 'allowed_not_screened';

/** The item and its options: `REDIRECTING(from-num,i)` → `from-num`. */
function itemOf(args: string): string {
  const comma = args.indexOf(',');
  return (comma < 0 ? args : args.slice(0, comma)).trim().toLowerCase();
}

/** The options after the item: `REDIRECTING(from-num,i)` → `i`. */
function optionsOf(args: string): string {
  const comma = args.indexOf(',');
  return comma < 0 ? '' : args.slice(comma + 1).trim().toLowerCase();
}

/** `from-num` → the party and its field; undefined for an item that names no party. */
function partyItem(item: string): { party: PartyName; field: string } | undefined {
  const dash = item.indexOf('-');
  const party = dash < 0 ? item : item.slice(0, dash);
  if (!PARTIES.has(party)) return undefined;
  return { party: party as PartyName, field: dash < 0 ? '' : item.slice(dash + 1) };
}

function read(channel: Channel, item: string): string | undefined {
  const redirecting = channel.redirecting;
  if (item === 'reason') return redirectingReasonName(redirecting.reason);
  if (item === 'orig-reason') return redirectingReasonName(redirecting.origReason);
  if (item === 'count') return String(redirecting.count);
  if (item.startsWith('pres')) return PRESENTATION;
  if (item.startsWith('priv-')) {
    const party = partyItem(item.slice(5));
    return party ? (partyField({ name: '', number: '' }, party.field) ?? '') : undefined;
  }
  const party = partyItem(item);
  return party ? partyField(redirecting[party.party], party.field) : undefined;
}

function written(current: Redirecting, item: string, value: string): Redirecting {
  if (item === 'reason') return { ...current, reason: parseRedirectingReason(value) };
  if (item === 'orig-reason') return { ...current, origReason: parseRedirectingReason(value) };
  if (item === 'count') {
    const count = value.trim();
    if (!/^\d{1,9}$/.test(count)) throw new InvalidError(`Unknown redirecting count '${value.slice(0, 64)}', value unchanged`);
    return { ...current, count: Number(count) };
  }
  // Private parties and their presentation are accepted and kept nowhere (only the caller and the connected line keep one).
  if (item.startsWith('pres') || item.startsWith('priv-')) return current;
  const party = partyItem(item);
  if (!party) throw new InvalidError(`Unknown redirecting data type '${item.slice(0, 64)}'`);
  const change: Partial<CallerId> = parseParty('REDIRECTING', party.field, value);
  return { ...current, [party.party]: { ...current[party.party], ...change } };
}

export const redirectingFunctions: readonly DialplanFunction[] = [
  {
    name: 'REDIRECTING',
    syntax: 'REDIRECTING(item[,i])',
    summary: 'The redirecting party: orig-, from- and to- with name, num or all; reason, orig-reason (cfu, cfb, cfnr, unavailable, deflection... or the text given), count, pres; priv-* read empty. Writable; each write is sent to the far end (a SIP caller not answered gets a 181) unless the option i is given; a SIP channel sends it as Diversion / History-Info (docs/sip.md).',
    category: 'channel',
    read: (call) => read(channelOf(call, 'REDIRECTING'), itemOf(call.args)),
    write(call, value) {
      const channel = channelOf(call, 'REDIRECTING');
      checkVariableValue(`REDIRECTING(${call.args.slice(0, 64)})`, value);
      const updated = written(channel.redirecting, itemOf(call.args), value);
      if (optionsOf(call.args).includes('i')) channel.redirecting = updated;
      else channel.indicateRedirecting(updated);
    },
  },
];
