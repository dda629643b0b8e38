// Variables by other means: HASH/HASHKEYS (channel variables named `~HASH~name~key~`, as
// func_strings stores them), ARRAY, GLOBAL and SHARED.
import { splitArgs } from '../../dialplan/args.ts';
import { InvalidError } from '../../core/errors.ts';
import { checkVariable } from '../../core/variable-limits.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';

/** Most entries one channel's SHARED() may hold. */
export const MAX_SHARED_VARIABLES = 1024;

const hashVariable = (hash: string, key: string): string => `~HASH~${hash}~${key}~`;
/** Where HASH(name) leaves the key order of its answer, and where HASH(name)=values takes keys from. */
const HASH_FIELDS_VARIABLE = '~ODBCFIELDS~';

/** The keys of a hash, inherited ones (`_~HASH~...`, `__~HASH~...`) included, in the order they were set. */
function hashKeys(call: FunctionCall, hash: string): string[] {
  const channel = channelOf(call, 'HASH');
  const keys: string[] = [];
  for (const name of channel.variableNames()) {
    const bare = name.startsWith('__') ? name.slice(2) : name.startsWith('_') ? name.slice(1) : name;
    const prefix = `~HASH~${hash}~`;
    if (bare.startsWith(prefix) && bare.endsWith('~') && bare.length > prefix.length && channel.getVariable(name) !== undefined) {
      const key = bare.slice(prefix.length, -1);
      if (!keys.includes(key)) keys.push(key);
    }
  }
  return keys;
}

function hashValue(call: FunctionCall, hash: string, key: string): string {
  const name = hashVariable(hash, key);
  const channel = channelOf(call, 'HASH');
  return call.services?.variable(channel, name) ?? channel.getVariable(name) ?? '';
}

/** Sets one key; a hash name starting with `_` or `__` makes the key inherited, as for variables. */
function setHashKey(call: FunctionCall, hash: string, key: string, value: string): void {
  const inheritance = hash.startsWith('__') ? '__' : hash.startsWith('_') ? '_' : '';
  const name = inheritance + hashVariable(hash.slice(inheritance.length), key);
  checkVariable(name, value);
  channelOf(call, 'HASH').setVariable(name, value === '' ? undefined : value);
}

function requireName(text: string, what: string): string {
  const name = text.trim();
  if (name === '') throw new InvalidError(`${what} requires a name`);
  return name;
}

/** The channel SHARED() addresses: the named one, or the caller's own. */
function sharedChannel(call: FunctionCall, channelName: string | undefined) {
  if (channelName === undefined || channelName.trim() === '') return channelOf(call, 'SHARED');
  return call.services?.findChannel(channelName.trim());
}

/** INC/DEC: the variable must hold an integer; it is changed and the new value answered. */
function crement(call: FunctionCall, step: number): string | undefined {
  const name = call.args.trim();
  if (name === '') return undefined;
  const channel = channelOf(call, step > 0 ? 'INC' : 'DEC');
  const current = call.services?.variable(channel, name) ?? channel.getVariable(name) ?? '';
  if (!/^[+-]?\d{1,10}$/.test(current.trim())) return undefined;
  const next = Number.parseInt(current, 10) + step;
  if (next > 2147483647 || next < -2147483648) return undefined;
  channel.setVariable(name, String(next));
  return String(next);
}

export const variableFunctions: readonly DialplanFunction[] = [
  {
    name: 'SET',
    syntax: 'SET(varname=value)',
    summary: 'Sets a channel variable inside an expression and answers the value.',
    category: 'variables',
    read(call) {
      const equals = call.args.indexOf('=');
      if (equals <= 0) return undefined;
      const name = call.args.slice(0, equals).trim();
      const value = call.args.slice(equals + 1).trim();
      if (name === '' || name.includes('(')) return undefined;
      checkVariable(name, value);
      channelOf(call, 'SET').setVariable(name, value);
      return value;
    },
  },
  {
    name: 'IMPORT',
    syntax: 'IMPORT(channel,varname)',
    summary: 'A variable of another channel, by name.',
    category: 'variables',
    read(call) {
      const [channelName = '', name = ''] = splitArgs(call.args, ',', 2);
      if (name.trim() === '' || !call.services) return undefined;
      const channel = call.services.findChannel(channelName.trim());
      return channel ? (call.services.variable(channel, name.trim()) ?? '') : '';
    },
  },
  {
    name: 'INC',
    syntax: 'INC(varname)',
    summary: 'Adds 1 to the integer in the variable and answers the new value.',
    category: 'variables',
    read: (call) => crement(call, 1),
  },
  {
    name: 'DEC',
    syntax: 'DEC(varname)',
    summary: 'Subtracts 1 from the integer in the variable and answers the new value.',
    category: 'variables',
    read: (call) => crement(call, -1),
  },
  {
    name: 'HASH',
    syntax: 'HASH(hashname[,hashkey])',
    summary: 'A key of a channel hash table; without a key, every value (keys in ${~ODBCFIELDS~}); Set(HASH(name)=v1,v2) assigns the keys ${~ODBCFIELDS~} lists.',
    category: 'variables',
    read(call) {
      const [hashText = '', key] = splitArgs(call.args, ',', 2);
      const hash = hashText.trim();
      if (hash === '') return undefined;
      if (key !== undefined) return hashValue(call, hash, key);
      const keys = hashKeys(call, hash);
      channelOf(call, 'HASH').setSystemVariable(HASH_FIELDS_VARIABLE, keys.join(','));
      return keys.map((k) => hashValue(call, hash, k)).join(',');
    },
    write(call, value) {
      const [hashText = '', key] = splitArgs(call.args, ',', 2);
      const hash = requireName(hashText, 'HASH()');
      if (key !== undefined) {
        if (key === '') throw new InvalidError('HASH() needs a key to be written');
        setHashKey(call, hash, key, value);
        return;
      }
      // The single-argument form: the keys a previous read (or a query) left in ~ODBCFIELDS~.
      const fields = channelOf(call, 'HASH').getVariable(HASH_FIELDS_VARIABLE);
      if (!fields) throw new InvalidError('HASH(name)= needs the keys in ${~ODBCFIELDS~}');
      const keys = splitArgs(fields);
      const values = splitArgs(value, ',', keys.length);
      keys.forEach((k, index) => {
        if (k !== '') setHashKey(call, hash, k, values[index] ?? '');
      });
    },
  },
  {
    name: 'HASHKEYS',
    syntax: 'HASHKEYS(hashname)',
    summary: 'The keys of a channel hash table, comma-separated.',
    category: 'variables',
    read: (call) => (call.args.trim() === '' ? undefined : hashKeys(call, call.args.trim()).join(',')),
  },
  {
    name: 'ARRAY',
    syntax: 'ARRAY(var1[,var2[,...]])',
    summary: 'Write-only: Set(ARRAY(a,b)=1,2) sets each variable to the value in the same position.',
    category: 'variables',
    write(call, value) {
      const names = splitArgs(call.args).map((name) => name.trim());
      const values = splitArgs(value, ',', names.length);
      names.forEach((name, index) => {
        if (name === '') return;
        checkVariable(name, values[index]);
        channelOf(call, 'ARRAY').setVariable(name, values[index] ?? '');
      });
    },
  },
  {
    name: 'GLOBAL',
    syntax: 'GLOBAL(varname)',
    summary: 'A global variable (the ones ARI\'s /asterisk/variable reads), readable and writable.',
    category: 'variables',
    read: (call) => (call.args.trim() === '' ? undefined : (call.services?.globals.get(call.args.trim()) ?? '')),
    write(call, value) {
      if (!call.services) throw new InvalidError('GLOBAL() is not available here');
      call.services.globals.set(requireName(call.args, 'GLOBAL()'), value === '' ? undefined : value);
    },
  },
  {
    name: 'SHARED',
    syntax: 'SHARED(varname[,channel])',
    summary: 'A variable of this channel (or the named one) that other channels can read and write.',
    category: 'variables',
    read(call) {
      const [name = '', channelName] = splitArgs(call.args, ',', 2);
      if (name.trim() === '' || !call.services) return undefined;
      const channel = sharedChannel(call, channelName);
      if (!channel) return undefined;
      return call.services.shared.get(channel)?.get(name.trim()) ?? '';
    },
    write(call, value) {
      const [name = '', channelName] = splitArgs(call.args, ',', 2);
      const variable = requireName(name, 'SHARED()');
      if (!call.services) throw new InvalidError('SHARED() is not available here');
      const channel = sharedChannel(call, channelName);
      if (!channel) throw new InvalidError(`SHARED(): no such channel ${String(channelName).slice(0, 64)}`);
      checkVariable(variable, value);
      let variables = call.services.shared.get(channel);
      if (!variables) call.services.shared.set(channel, (variables = new Map()));
      if (value === '') {
        variables.delete(variable);
        return;
      }
      if (!variables.has(variable) && variables.size >= MAX_SHARED_VARIABLES) throw new InvalidError(`SHARED(): more than ${MAX_SHARED_VARIABLES} variables`);
      variables.set(variable, value);
    },
  },
];
