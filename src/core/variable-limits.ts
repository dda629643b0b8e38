// Bounds on the variables users set (channel, bridge and global variables, and the `variables`
// bodies of originate, create and setChannelVars), so one request cannot make the server hold
// arbitrarily large names, values or numbers of them, and bounds on how many variables one
// channel and the server hold, so many requests (or a dialplan loop setting `v${N}`) cannot
// either. Asterisk has no such bounds (its substitution buffers truncate long values instead,
// and its variable lists grow without end); ours answer 400 with the limit.
import { InvalidError } from './errors.ts';

/** One variable to set on a channel (an entry of an ARI `variables` body object). */
export interface VariableAssignment {
  readonly name: string;
  readonly value: string;
  /** Show the variable in `channelvars` of later snapshots. */
  readonly reportEvents: boolean;
}

/** Longest variable name, in characters (a function call such as `CALLERID(name)` included). */
export const MAX_VARIABLE_NAME_LENGTH = 255;
/** Longest variable value, in characters (64 Ki). */
export const MAX_VARIABLE_VALUE_LENGTH = 65536;
/** Most variables in one `variables` body. */
export const MAX_VARIABLES_PER_REQUEST = 512;
/**
 * Most variables one channel holds. Creating another is refused; changing or unsetting an
 * existing one always works. The channel's own fixed-name variables (DIALSTATUS and the like)
 * are not refused, so a full channel still runs its dialplan apps.
 */
export const MAX_CHANNEL_VARIABLES = 4096;
/** Most global variables (ARI's /asterisk/variable, GLOBAL(), extensions.conf [globals]). */
export const MAX_GLOBAL_VARIABLES = 16384;

/** InvalidError: a channel already holds MAX_CHANNEL_VARIABLES and `name` would be a new one. */
export function tooManyChannelVariables(name: string): InvalidError {
  return new InvalidError(`Too many variables on the channel: at most ${MAX_CHANNEL_VARIABLES}; not creating ${name.slice(0, 64)}`);
}

/** InvalidError: MAX_GLOBAL_VARIABLES exist and `name` would be a new one. */
export function tooManyGlobalVariables(name: string): InvalidError {
  return new InvalidError(`Too many global variables: at most ${MAX_GLOBAL_VARIABLES}; not creating ${name.slice(0, 64)}`);
}

/** InvalidError when `name` is longer than MAX_VARIABLE_NAME_LENGTH. */
export function checkVariableName(name: string): void {
  if (name.length > MAX_VARIABLE_NAME_LENGTH) {
    throw new InvalidError(`Variable name is longer than ${MAX_VARIABLE_NAME_LENGTH} characters`);
  }
}

/** InvalidError when `value` is longer than MAX_VARIABLE_VALUE_LENGTH. */
export function checkVariableValue(name: string, value: string | undefined): void {
  if (value !== undefined && value.length > MAX_VARIABLE_VALUE_LENGTH) {
    throw new InvalidError(`Variable value is longer than ${MAX_VARIABLE_VALUE_LENGTH} characters: ${name.slice(0, 64)}`);
  }
}

/** Both checks. */
export function checkVariable(name: string, value: string | undefined): void {
  checkVariableName(name);
  checkVariableValue(name, value);
}

/** Default of `variables.max_channel_bytes`: what one channel's variables may hold (names and values). */
export const DEFAULT_CHANNEL_VARIABLE_BYTES = 1024 * 1024;
/** Default of `variables.max_global_bytes`: what all global variables together may hold. */
export const DEFAULT_GLOBAL_VARIABLE_BYTES = 16 * 1024 * 1024;

/**
 * The size a variable counts for against the byte bounds: its name and value in UTF-16 code
 * units, the way they sit in memory. The counts alone allowed 4,096 × 64 KiB per channel (512 MB
 * in the engine's strings) and 16,384 × 64 KiB of globals.
 */
export function variableSize(name: string, value: string): number {
  return 2 * (name.length + value.length);
}

/** InvalidError: setting `name` would take the holder beyond `max` bytes of variables. */
export function tooManyVariableBytes(holder: string, max: number, setting: string, name: string): InvalidError {
  return new InvalidError(`Variables on the ${holder} would exceed ${max} bytes (${setting}); not setting ${name.slice(0, 64)}`);
}
