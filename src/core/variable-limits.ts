// Bounds on the variables users set (channel, bridge and global variables, and the `variables`
// bodies of originate, create and setChannelVars), so one request cannot make the server hold
// arbitrarily large names, values or numbers of them. Asterisk has no such bounds (its
// substitution buffers truncate long values instead); ours answer 400 with the limit.
import { InvalidError } from './errors.ts';

/** Longest variable name, in characters (a function call such as `CALLERID(name)` included). */
export const MAX_VARIABLE_NAME_LENGTH = 255;
/** Longest variable value, in characters (64 Ki). */
export const MAX_VARIABLE_VALUE_LENGTH = 65536;
/** Most variables in one `variables` body. */
export const MAX_VARIABLES_PER_REQUEST = 512;

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
