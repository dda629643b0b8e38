// CDR() and CDR_PROP() (func_cdr): the channel's current call record read and written from the
// dialplan. Fields the engine decides are read-only, as in Asterisk 22; accountcode, amaflags,
// userfield and variables of the dialplan's own may be written.
import { InvalidError } from '../../core/errors.ts';
import { AMA_CODE, DISPOSITION_CODE, formatCdrTime, parseAmaFlags, type CallDetailRecord } from '../../core/cdr/record.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';

/** The standard fields; any other name is a variable of the record. */
const FIELDS = new Set([
  'accountcode', 'src', 'dst', 'dcontext', 'clid', 'channel', 'dstchannel', 'lastapp', 'lastdata', 'start', 'answer', 'end',
  'duration', 'billsec', 'disposition', 'amaflags', 'uniqueid', 'linkedid', 'userfield', 'peeraccount', 'sequence',
]);
const WRITABLE = new Set(['accountcode', 'amaflags', 'userfield']);
/** Names and values of CDR variables are bounded like channel variables' lines. */
const MAX_NAME = 80;
const MAX_VALUE = 4096;
const MAX_VARIABLES = 100;

function splitCall(call: FunctionCall): { name: string; options: string } {
  const comma = call.args.indexOf(',');
  const name = (comma < 0 ? call.args : call.args.slice(0, comma)).trim();
  return { name, options: comma < 0 ? '' : call.args.slice(comma + 1).trim() };
}

/** A field as ast_cdr_format_var prints it: `u` gives raw numbers and epoch times, `f` fractional seconds. */
function formatField(record: CallDetailRecord, field: string, options: string): string {
  const raw = options.includes('u');
  const time = (ms: number): string => (raw ? (ms ? (ms / 1000).toFixed(6) : '0.000000') : formatCdrTime(ms));
  switch (field) {
    case 'start':
    case 'answer':
    case 'end':
      return time(record[field]);
    case 'duration':
    case 'billsec': {
      if (!options.includes('f')) return String(record[field]);
      const from = field === 'duration' ? record.start : record.answer;
      if (!from) return '0.000000';
      return ((((record.end || Date.now()) - from) / 1000)).toFixed(6);
    }
    case 'disposition':
      return raw ? String(DISPOSITION_CODE[record.disposition]) : record.disposition;
    case 'amaflags':
      return raw ? String(AMA_CODE[record.amaflags]) : record.amaflags;
    case 'sequence':
      return String(record.sequence);
    default:
      return String(record[field as keyof CallDetailRecord] ?? '');
  }
}

export const recordFunctions: readonly DialplanFunction[] = [
  {
    name: 'CDR',
    syntax: 'CDR(name[,options])',
    summary: "The channel's call record: a standard field (read-only but accountcode, amaflags, userfield) or a variable of its own; options u (raw numbers) and f (fractional seconds).",
    category: 'records',
    read(call) {
      const channel = channelOf(call, 'CDR');
      const { name, options } = splitCall(call);
      const cdr = call.services?.records?.cdr.current(channel.id);
      if (!cdr || name === '') return undefined;
      const field = name.toLowerCase();
      if (FIELDS.has(field)) {
        if (field === 'end' && cdr.state !== 'finalized' && !options.includes('u')) return '';
        return formatField(cdr.record(), field, options);
      }
      return cdr.variables.get(name);
    },
    write(call, value) {
      const channel = channelOf(call, 'CDR');
      const { name } = splitCall(call);
      const engine = call.services?.records?.cdr;
      if (!engine) return;
      const field = name.toLowerCase();
      if (name === '' || name.length > MAX_NAME || !/^[A-Za-z0-9_.-]+$/.test(name)) throw new InvalidError(`CDR(${name.slice(0, MAX_NAME)}): not a name a record variable can have`);
      if (value.length > MAX_VALUE) throw new InvalidError(`CDR(${name}): value longer than ${MAX_VALUE} characters`);
      if (FIELDS.has(field) && !WRITABLE.has(field)) throw new InvalidError(`CDR(${field}) is read-only`);
      if (field === 'accountcode') {
        // The account is the channel's (as CHANNEL(accountcode)); records take it from the channel.
        channel.accountcode = value;
        const view = engine.channel(channel.id);
        if (view) view.accountcode = value;
        return;
      }
      if (field === 'amaflags') {
        const flags = parseAmaFlags(value);
        if (!flags) throw new InvalidError(`CDR(amaflags): '${value.slice(0, 40)}' is not OMIT, BILLING or DOCUMENTATION`);
        const view = engine.channel(channel.id);
        if (view) view.amaflags = flags;
        return;
      }
      for (const cdr of engine.writable(channel.id)) {
        if (field === 'userfield') {
          cdr.userfield = value;
          continue;
        }
        if (!cdr.variables.has(name) && cdr.variables.size >= MAX_VARIABLES) throw new InvalidError(`CDR(${name}): a record holds at most ${MAX_VARIABLES} variables`);
        cdr.variables.set(name, value);
      }
    },
  },
  {
    name: 'CDR_PROP',
    syntax: 'CDR_PROP(property)',
    summary: 'Write-only: `disable` (1: post none of the channel\'s records, 0: post them again) or `party_a` (1: prefer the channel as party A in bridges).',
    category: 'records',
    write(call, value) {
      const channel = channelOf(call, 'CDR_PROP');
      const engine = call.services?.records?.cdr;
      const property = call.args.trim().toLowerCase();
      const on = /^(yes|true|y|t|1|on)$/i.test(value.trim());
      if (property === 'disable') engine?.setDisabled(channel.id, on);
      else if (property === 'party_a') engine?.setPartyA(channel.id, on);
      else throw new InvalidError(`CDR_PROP(${property.slice(0, 40)}): unknown property (disable, party_a)`);
    },
  },
];
