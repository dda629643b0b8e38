// Dialplan functions on channels: one declaration each (src/pbx/functions/*.ts) in one
// registry, read by substitution (`${CUT(...)}`), ARI getChannelVar and `$[...]`, written by
// Set(), ARI setChannelVar and originate variables. The README's and docs' function lists are
// generated from it (scripts/functions-docs.ts).
import type { Channel } from '../core/channels/channel.ts';
import { InvalidError } from '../core/errors.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from '../core/variable-limits.ts';
import type { DialplanFunction, FunctionCall, FunctionServices } from './function-services.ts';
import { astdbFunctions } from './functions/astdb.ts';
import { messageFunctions } from './functions/message.ts';
import { sipFunctions } from '../channels/pjsip/dialplan-functions.ts';
import { channelFunctions } from './functions/channel.ts';
import { executorFunctions } from './functions/executor.ts';
import { logicFunctions } from './functions/logic.ts';
import { stateFunctions } from './functions/state.ts';
import { stringFunctions } from './functions/strings.ts';
import { timeFunctions } from './functions/time.ts';
import { variableFunctions } from './functions/variables.ts';

export type { DialplanFunction, FunctionCall, FunctionServices } from './function-services.ts';

const REGISTRY: ReadonlyMap<string, DialplanFunction> = (() => {
  const registry = new Map<string, DialplanFunction>();
  for (const fn of [...logicFunctions, ...stringFunctions, ...timeFunctions, ...variableFunctions, ...channelFunctions, ...executorFunctions, ...stateFunctions, ...astdbFunctions, ...messageFunctions, ...sipFunctions]) {
    if (registry.has(fn.name)) throw new Error(`dialplan function ${fn.name} declared twice`);
    registry.set(fn.name, fn);
  }
  return registry;
})();

/**
 * Functions Asterisk has that reach outside the server (run programs, write files, fetch URLs,
 * query other databases): Patchbay does not provide them, and the load-time check names them.
 */
export const UNPROVIDED_DIALPLAN_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['SHELL', 'runs a shell command'],
  ['SYSTEM', 'runs a shell command'],
  ['FILE', 'reads and writes files'],
  ['FILE_COUNT_LINE', 'reads files'],
  ['FILE_FORMAT', 'reads files'],
  ['STAT', 'reads file metadata'],
  ['ENV', 'reads and writes the server\'s environment'],
  ['CURL', 'fetches URLs'],
  ['CURLOPT', 'fetches URLs'],
  ['ODBC', 'queries external databases'],
  ['ODBC_FETCH', 'queries external databases'],
  ['REALTIME', 'queries external databases'],
  ['REALTIME_STORE', 'writes external databases'],
  ['REALTIME_DESTROY', 'writes external databases'],
  ['REALTIME_FIELD', 'queries external databases'],
  ['REALTIME_HASH', 'queries external databases'],
  ['SQL_ESC', 'quotes for external databases'],
]);

/** The same names, as the load-time dialplan check takes them. */
export const FUNCTIONS_WITH_OUTSIDE_EFFECTS: ReadonlySet<string> = new Set(UNPROVIDED_DIALPLAN_FUNCTIONS.keys());

/** The names of every provided function, in declaration order. */
export function dialplanFunctionNames(): string[] {
  return [...REGISTRY.keys()];
}

/** Every provided function's declaration, in declaration order (for the docs). */
export function dialplanFunctions(): readonly DialplanFunction[] {
  return [...REGISTRY.values()];
}

/**
 * Whether the dialplan can call function `name` (case-insensitive). Also true for writable
 * functions another subsystem registers on a channel table at run time (`extraWriters`).
 */
export function isKnownDialplanFunction(name: string, extraWriters?: { get(name: string): unknown }): boolean {
  const upper = name.toUpperCase();
  return REGISTRY.has(upper) || extraWriters?.get(upper) !== undefined;
}

/** Whether `name` is one of the functions deliberately not provided (SHELL, CURL, ...). */
export function isUnprovidedDialplanFunction(name: string): boolean {
  return UNPROVIDED_DIALPLAN_FUNCTIONS.has(name.toUpperCase());
}

/** `NAME(args)` → [NAME, args], or undefined when `text` is a plain variable name. */
export function parseFunctionCall(text: string): [string, string] | undefined {
  const open = text.indexOf('(');
  if (open <= 0 || !text.endsWith(')')) return undefined;
  return [text.slice(0, open).toUpperCase(), text.slice(open + 1, -1)];
}

function callOf(channel: Channel, args: string): FunctionCall {
  return { channel, args, services: channel.functions.services };
}

/** Asterisk's substitution buffers truncate; so do we, at the variable value limit. */
function bounded(value: string | undefined): string | undefined {
  return value !== undefined && value.length > MAX_VARIABLE_VALUE_LENGTH ? value.slice(0, MAX_VARIABLE_VALUE_LENGTH) : value;
}

/**
 * Reads a function; undefined when the function is unknown, cannot be read, or refuses its
 * arguments (substituted as nothing, as Asterisk does after logging).
 */
export function readChannelFunction(channel: Channel, name: string, args: string): string | undefined {
  const fn = REGISTRY.get(name.toUpperCase());
  if (!fn?.read) return undefined;
  try {
    return bounded(fn.read(callOf(channel, args)));
  } catch (error) {
    if (error instanceof InvalidError) return undefined;
    throw error;
  }
}

/** Writes a function; throws InvalidError when it cannot be written. */
export function writeChannelFunction(channel: Channel, name: string, args: string, value: string): void {
  const upper = name.toUpperCase();
  const fn = REGISTRY.get(upper);
  if (fn?.write) {
    fn.write(callOf(channel, args), value);
    return;
  }
  if (fn) throw new InvalidError(`${upper}() cannot be written`);
  // Setters other subsystems provide on the channel table and that have no declaration here.
  const writer = channel.functions.get(upper);
  if (!writer) throw new InvalidError(`Unknown function: ${upper}`);
  writer(channel, args, value);
}

/**
 * Writes a function without a channel, as ARI's setGlobalVar does for a name ending in `)`
 * (`DB(family/key)`, `GLOBAL(name)`, `DEVICE_STATE(Custom:x)`); InvalidError when it refuses,
 * also for the functions that need a channel.
 */
export function writeFunctionWithoutChannel(services: FunctionServices, name: string, args: string, value: string): void {
  const upper = name.toUpperCase();
  const fn = REGISTRY.get(upper);
  if (!fn) throw new InvalidError(`Unknown function: ${upper}`);
  if (!fn.write) throw new InvalidError(`${upper}() cannot be written`);
  fn.write({ channel: undefined, args, services }, value);
}

/** Built-in variables that are another name for a CHANNEL() field (`${EXTEN}` is `CHANNEL(exten)`). */
const BUILTIN_CHANNEL_FIELDS: ReadonlyMap<string, string> = new Map([
  ['CHANNEL', 'name'],
  ['UNIQUEID', 'uniqueid'],
  ['LINKEDID', 'linkedid'],
  ['CONTEXT', 'context'],
  ['EXTEN', 'exten'],
  ['PRIORITY', 'priority'],
  ['HANGUPCAUSE', 'hangupcause'],
  ['LANGUAGE', 'language'],
  ['ACCOUNTCODE', 'accountcode'],
]);

/** Built-in variables that are another name for a CALLERID() field. */
const BUILTIN_CALLER_FIELDS: ReadonlyMap<string, string> = new Map([
  ['CALLERID', 'all'],
  ['CALLERIDNUM', 'num'],
  ['CALLERIDNAME', 'name'],
  ['DNID', 'dnid'],
  ['RDNIS', 'rdnis'],
]);

/**
 * The variables Asterisk computes rather than stores (pbx_builtin_getvar_helper): `${EXTEN}`,
 * `${EPOCH}`, `${HANGUPCAUSE}`... A channel variable of the same name wins, as in Asterisk.
 */
export function builtinVariable(channel: Channel, name: string): string | undefined {
  const field = BUILTIN_CHANNEL_FIELDS.get(name);
  if (field !== undefined) return readChannelFunction(channel, 'CHANNEL', field);
  const callerField = BUILTIN_CALLER_FIELDS.get(name);
  if (callerField !== undefined) return readChannelFunction(channel, 'CALLERID', callerField);
  switch (name) {
    case 'EPOCH':
      return String(Math.floor(Date.now() / 1000));
    case 'DATETIME': {
      const now = new Date();
      const two = (n: number): string => String(n).padStart(2, '0');
      return `${two(now.getDate())}${two(now.getMonth() + 1)}${now.getFullYear()}-${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}`;
    }
    case 'TIMESTAMP': {
      const now = new Date();
      const two = (n: number): string => String(n).padStart(2, '0');
      return `${now.getFullYear()}${two(now.getMonth() + 1)}${two(now.getDate())}-${two(now.getHours())}${two(now.getMinutes())}${two(now.getSeconds())}`;
    }
    case 'HINT':
      return readChannelFunction(channel, 'HINT', `${channel.location.exten}@${channel.location.context}`);
    default:
      return undefined;
  }
}
