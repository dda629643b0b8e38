// Dialplan functions on channels: one declaration each (src/pbx/functions/*.ts, and those channel
// technologies register through their context) in one registry per core, read by substitution
// (`${CUT(...)}`), ARI getChannelVar and `$[...]`, written by Set(), ARI setChannelVar and
// originate variables. Each channel carries its core's registry (channel.functions), so two
// servers in one process never share a registration. The README's and docs' function lists are
// generated from the built-in declarations and the built-in technologies' (src/control/dialplan-catalog.ts).
import type { Channel, ChannelFunctions, FunctionWriter } from '../core/channels/channel.ts';
import type { TechnologyFunction } from '../core/channels/technology.ts';
import { InvalidError } from '../core/errors.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from '../core/variable-limits.ts';
import type { DialplanFunction, FunctionCall, FunctionServices } from './function-services.ts';
import { astdbFunctions } from './functions/astdb.ts';
import { messageFunctions } from './functions/message.ts';
import { channelFunctions } from './functions/channel.ts';
import { redirectingFunctions } from './functions/redirecting.ts';
import { executorFunctions } from './functions/executor.ts';
import { logicFunctions } from './functions/logic.ts';
import { stateFunctions } from './functions/state.ts';
import { stringFunctions } from './functions/strings.ts';
import { timeFunctions } from './functions/time.ts';
import { variableFunctions } from './functions/variables.ts';
import { recordFunctions } from './functions/cdr.ts';

export type { DialplanFunction, FunctionCall, FunctionServices } from './function-services.ts';

/** The functions every core has, in declaration order. */
export const BUILTIN_FUNCTIONS: readonly DialplanFunction[] = [
  ...logicFunctions,
  ...stringFunctions,
  ...timeFunctions,
  ...variableFunctions,
  ...channelFunctions,
  ...redirectingFunctions,
  ...executorFunctions,
  ...stateFunctions,
  ...astdbFunctions,
  ...messageFunctions,
  ...recordFunctions,
];

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

/** Asterisk's substitution buffers truncate; so do we, at the variable value limit. */
function bounded(value: string | undefined): string | undefined {
  return value !== undefined && value.length > MAX_VARIABLE_VALUE_LENGTH ? value.slice(0, MAX_VARIABLE_VALUE_LENGTH) : value;
}

/** A function as the registry holds it: a built-in declaration, or a technology's (listed under its docs section). */
export type RegisteredFunction = DialplanFunction | TechnologyFunction;

/**
 * One core's dialplan functions: the built-in declarations, those technologies register while
 * they run, the setters other subsystems own (TALK_DETECT, LOCAL, TIMEOUT) and the services every
 * function may use, attached by the core.
 */
export class FunctionRegistry implements ChannelFunctions {
  readonly #functions = new Map<string, RegisteredFunction>();
  readonly #writers = new Map<string, FunctionWriter>();
  #services: FunctionServices | undefined;

  constructor(builtins: readonly DialplanFunction[] = BUILTIN_FUNCTIONS) {
    for (const fn of builtins) this.register(fn);
  }

  /** Adds a function; returns its removal. Throws when the name is taken. */
  register(fn: RegisteredFunction): () => void {
    const name = fn.name.toUpperCase();
    if (this.#functions.has(name)) throw new Error(`dialplan function ${name} declared twice`);
    this.#functions.set(name, fn);
    return () => {
      if (this.#functions.get(name) === fn) this.#functions.delete(name);
    };
  }

  /** Registers the setter of function `name` that a subsystem owns; it runs before the declaration's write. */
  registerWriter(name: string, writer: FunctionWriter): void {
    this.#writers.set(name.toUpperCase(), writer);
  }

  /** What functions may use; undefined until the core attaches it. */
  get services(): FunctionServices | undefined {
    return this.#services;
  }

  attach(services: FunctionServices): void {
    this.#services = services;
  }

  /** Whether the dialplan can call function `name` (case-insensitive). */
  has(name: string): boolean {
    const upper = name.toUpperCase();
    return this.#functions.has(upper) || this.#writers.has(upper);
  }

  get(name: string): RegisteredFunction | undefined {
    return this.#functions.get(name.toUpperCase());
  }

  /** Every function, in registration order (built-ins first). */
  list(): RegisteredFunction[] {
    return [...this.#functions.values()];
  }

  names(): string[] {
    return [...this.#functions.keys()];
  }

  /**
   * Reads a function; undefined when the function is unknown, cannot be read, or refuses its
   * arguments (substituted as nothing, as Asterisk does after logging).
   */
  read(channel: Channel, name: string, args: string): string | undefined {
    const fn = this.#functions.get(name.toUpperCase());
    if (!fn?.read) return undefined;
    try {
      return bounded(fn.read({ channel, args, services: this.#services }));
    } catch (error) {
      if (error instanceof InvalidError) return undefined;
      throw error;
    }
  }

  /** Writes a function; throws InvalidError when it cannot be written. */
  write(channel: Channel, name: string, args: string, value: string): void {
    const upper = name.toUpperCase();
    // The owner's setter first: the declarations of TALK_DETECT, LOCAL and TIMEOUT only say it is missing.
    const writer = this.#writers.get(upper);
    if (writer) {
      writer(channel, args, value);
      return;
    }
    const fn = this.#functions.get(upper);
    if (fn?.write) {
      fn.write({ channel, args, services: this.#services }, value);
      return;
    }
    throw new InvalidError(fn ? `${upper}() cannot be written` : `Unknown function: ${upper}`);
  }

  /**
   * Writes a function without a channel, as ARI's setGlobalVar does for a name ending in `)`
   * (`DB(family/key)`, `GLOBAL(name)`, `DEVICE_STATE(Custom:x)`); InvalidError when it refuses,
   * also for the functions that need a channel.
   */
  writeWithoutChannel(name: string, args: string, value: string): void {
    const upper = name.toUpperCase();
    const fn = this.#functions.get(upper);
    if (!fn) throw new InvalidError(`Unknown function: ${upper}`);
    if (!fn.write) throw new InvalidError(`${upper}() cannot be written`);
    fn.write({ channel: undefined, args, services: this.#services }, value);
  }
}

/** Reads a function of the channel's core (see FunctionRegistry.read). */
export function readChannelFunction(channel: Channel, name: string, args: string): string | undefined {
  return channel.functions.read(channel, name, args);
}

/** Writes a function of the channel's core; throws InvalidError when it cannot be written. */
export function writeChannelFunction(channel: Channel, name: string, args: string, value: string): void {
  channel.functions.write(channel, name, args, value);
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
