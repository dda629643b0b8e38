// A channel's variables with what they hold in bytes (variable-limits.ts variableSize), kept as
// they change, so the `variables.max_channel_bytes` check costs nothing per write.
import { tooManyVariableBytes, variableSize } from '../variable-limits.ts';

/** What a store without variables iterates (shared, never written). */
const NO_VALUES: ReadonlyMap<string, string> = new Map();

export class VariableStore implements Iterable<[string, string]> {
  /**
   * Made at the first variable set: many channels (a Local pair's `;1`) never hold one, and an
   * empty Map per channel outlived the young generation with the call (docs/performance.md, eighth pass).
   */
  #values: Map<string, string> | undefined;
  #bytes = 0;
  /** The name set last (the Map's last key), when known: setting it again moves nothing. */
  #newest: string | undefined;

  get size(): number {
    return this.#values?.size ?? 0;
  }

  /** What the variables hold, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  get(name: string): string | undefined {
    return this.#values?.get(name);
  }

  has(name: string): boolean {
    return this.#values?.has(name) ?? false;
  }

  keys(): IterableIterator<string> {
    return (this.#values ?? NO_VALUES).keys();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return (this.#values ?? NO_VALUES).entries();
  }

  /** How much setting `name` to `value` (undefined: unsetting) would change `bytes`. */
  change(name: string, value: string | undefined): number {
    const old = this.#values?.get(name);
    return (value === undefined ? 0 : variableSize(name, value)) - (old === undefined ? 0 : variableSize(name, old));
  }

  /** Whether setting `name` to `value` keeps the variables within `limit` bytes (or does not grow them). */
  hasRoom(name: string, value: string | undefined, limit: number): boolean {
    const growth = this.change(name, value);
    return growth <= 0 || this.#bytes + growth <= limit;
  }

  /** InvalidError unless hasRoom(): growth beyond the bound is refused; shrinking or unsetting always works. */
  assertRoom(name: string, value: string | undefined, limit: number): void {
    if (!this.hasRoom(name, value, limit)) throw tooManyVariableBytes('channel', limit, 'variables.max_channel_bytes', name);
  }

  /** Sets or unsets, without any check. */
  store(name: string, value: string | undefined): void {
    this.#bytes += this.change(name, value);
    // Set again, a variable becomes the newest (Asterisk re-inserts it at its list's head): the
    // order a Local call's copies are announced in (Channel.copyVariablesFrom).
    if (value === undefined) {
      if (name === this.#newest) this.#newest = undefined;
      this.#values?.delete(name);
      return;
    }
    const values = (this.#values ??= new Map());
    // The newest already: set in place. A delete and insert would leave a deleted entry, and
    // enough of them re-hash the table into a new one (a variable set again and again, such as
    // a status an application sets at each step, made a new table every few sets).
    if (name !== this.#newest) {
      values.delete(name);
      this.#newest = name;
    }
    values.set(name, value);
  }
}
