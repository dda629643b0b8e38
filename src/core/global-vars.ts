// Server-wide variables, as set and read by ARI's /asterisk/variable (Asterisk's global dialplan variables).
import { InvalidError } from './errors.ts';
import { checkVariable, checkVariableName, MAX_GLOBAL_VARIABLES, tooManyGlobalVariables } from './variable-limits.ts';

export class GlobalVariables {
  readonly #values = new Map<string, string>();

  get(name: string): string | undefined {
    assertName(name);
    return this.#values.get(name);
  }

  /** Sets the variable, or unsets it when `value` is undefined; InvalidError for a new one beyond MAX_GLOBAL_VARIABLES. */
  set(name: string, value: string | undefined): void {
    assertName(name);
    checkVariable(name, value);
    if (value !== undefined && this.#values.size >= MAX_GLOBAL_VARIABLES && !this.#values.has(name)) throw tooManyGlobalVariables(name);
    if (value === undefined) this.#values.delete(name);
    else this.#values.set(name, value);
  }

  /** Every set variable, in the order they were first set. */
  list(): Record<string, string> {
    return Object.fromEntries(this.#values);
  }
}

function assertName(name: string): void {
  if (name === '') throw new InvalidError('Variable name is required');
  checkVariableName(name);
}
