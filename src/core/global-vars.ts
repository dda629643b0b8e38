// Server-wide variables, as set and read by ARI's /asterisk/variable (Asterisk's global dialplan variables).
import { InvalidError } from './errors.ts';
import type { SharedStore, SharedWrite, SharedWriteListener } from './shared-writes.ts';
import { checkVariable, checkVariableName, DEFAULT_GLOBAL_VARIABLE_BYTES, MAX_GLOBAL_VARIABLES, tooManyGlobalVariables, tooManyVariableBytes, variableSize } from './variable-limits.ts';

export class GlobalVariables implements SharedStore {
  readonly #values = new Map<string, string>();
  /** What the variables hold, by variableSize(). */
  #bytes = 0;
  /** Most bytes all global variables hold (`variables.max_global_bytes`); set from the configuration. */
  maxBytes = DEFAULT_GLOBAL_VARIABLE_BYTES;
  /** Told of every set and unset made here (a cluster member shares them). */
  onWrite: SharedWriteListener | undefined;

  get(name: string): string | undefined {
    assertName(name);
    return this.#values.get(name);
  }

  /** Sets the variable, or unsets it when `value` is undefined; InvalidError for a new one beyond MAX_GLOBAL_VARIABLES. */
  set(name: string, value: string | undefined): void {
    this.#store(name, value);
    this.onWrite?.({ name, value });
  }

  applyShared(write: SharedWrite): void {
    this.#store(write.name, write.value);
  }

  #store(name: string, value: string | undefined): void {
    assertName(name);
    checkVariable(name, value);
    if (value !== undefined && this.#values.size >= MAX_GLOBAL_VARIABLES && !this.#values.has(name)) throw tooManyGlobalVariables(name);
    const old = this.#values.get(name);
    const before = this.#bytes;
    const after = before - (old === undefined ? 0 : variableSize(name, old)) + (value === undefined ? 0 : variableSize(name, value));
    // Growth beyond the byte bound is refused; shrinking or unsetting always works.
    if (after > this.maxBytes && after > before) throw tooManyVariableBytes('server (globals)', this.maxBytes, 'variables.max_global_bytes', name);
    if (value === undefined) this.#values.delete(name);
    else this.#values.set(name, value);
    this.#bytes = after;
  }

  /** What the global variables hold, in bytes as counted against `variables.max_global_bytes`. */
  get byteCount(): number {
    return this.#bytes;
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
