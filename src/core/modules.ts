// The module registry: named, loadable subsystems in the manner of Asterisk's loadable modules.
// Other subsystems ask `isRunning(name)` (or listen for 'change') to switch themselves on and off.
import { TypedEmitter } from '../util/typed-emitter.ts';
import { ConflictError, NotFoundError } from './errors.ts';

/** Longest reason a failed transition passes on to the client. */
const MAX_REASON_CHARS = 500;

export type SupportLevel = 'core' | 'extended' | 'deprecated';
export type ModuleStatus = 'Running' | 'Not Running';

export interface ModuleDefinition {
  /** Asterisk-style resource name, e.g. `res_ari_channels.so`. */
  readonly name: string;
  readonly description: string;
  readonly supportLevel: SupportLevel;
  load(): Promise<void> | void;
  unload(): Promise<void> | void;
  /** Absent when the module cannot be reloaded. */
  reload?(): Promise<void> | void;
  /** False for modules the server cannot run without. */
  canUnload?(): boolean;
  /** How many users hold the module; a module in use cannot be unloaded. */
  useCount?(): number;
  /**
   * Modules this one needs running (Asterisk's `.requires`): it cannot load without them, and
   * while it runs it counts as a user of each, so they cannot be unloaded under it.
   */
  readonly requires?: readonly string[];
  /** False: loadAll leaves the module unloaded (modules.conf `noload`); `module load` still loads it. */
  autoload?(): boolean;
}

export interface ModuleRecord {
  name: string;
  description: string;
  use_count: number;
  status: ModuleStatus;
  support_level: SupportLevel;
}

export interface ModuleChange {
  readonly name: string;
  readonly status: ModuleStatus;
}

// A type alias rather than an interface: only aliases are assignable to the emitter's event map.
type ModuleEvents = {
  /** A module started or stopped running. */
  change: ModuleChange;
  /** A running module finished a reload (Asterisk counts this as a configuration reload). */
  reloaded: { readonly name: string };
};

/** Asterisk accepts module names with or without the `.so` suffix; so do we. */
function canonicalName(name: string): string {
  return name.endsWith('.so') ? name : `${name}.so`;
}

export class ModuleRegistry extends TypedEmitter<ModuleEvents> {
  readonly #definitions = new Map<string, ModuleDefinition>();
  readonly #running = new Set<string>();
  /** Modules in the middle of a load, unload or reload; a second transition must not interleave. */
  readonly #busy = new Set<string>();

  register(definition: ModuleDefinition): void {
    const name = canonicalName(definition.name);
    if (this.#definitions.has(name)) throw new ConflictError(`Module ${name} is already registered`);
    this.#definitions.set(name, definition);
  }

  isRunning(name: string): boolean {
    return this.#running.has(canonicalName(name));
  }

  /** Every registered module, loaded or not, in registration order. */
  list(): ModuleRecord[] {
    return [...this.#definitions.keys()].map((name) => this.#record(name));
  }

  get(name: string): ModuleRecord {
    const canonical = canonicalName(name);
    if (!this.#running.has(canonical)) throw new NotFoundError('Module could not be found in running modules');
    return this.#record(canonical);
  }

  async load(name: string): Promise<void> {
    const canonical = canonicalName(name);
    const definition = this.#definitions.get(canonical);
    if (this.#running.has(canonical)) throw new ConflictError('Module is already loaded');
    if (!definition) throw new ConflictError('Module could not be loaded');
    if ((definition.requires ?? []).some((required) => !this.isRunning(required))) throw new ConflictError('Module could not be loaded');
    await this.#transition(canonical, 'Module could not be loaded', async () => {
      await definition.load();
      this.#running.add(canonical);
    });
  }

  async unload(name: string): Promise<void> {
    const { canonical, definition } = this.#runningModule(name);
    if (definition.canUnload?.() === false || this.#useCount(canonical) > 0) {
      throw new ConflictError('Module could not be unloaded');
    }
    await this.#transition(canonical, 'Module could not be unloaded', async () => {
      await definition.unload();
      this.#running.delete(canonical);
    });
  }

  async reload(name: string): Promise<void> {
    const { canonical, definition } = this.#runningModule(name);
    const reload = definition.reload;
    if (!reload) throw new ConflictError('Module does not support reloading');
    if (this.#busy.has(canonical)) throw new ConflictError('Another reload is currently in progress');
    await this.#transition(canonical, 'An unknown error occurred while reloading the module', () =>
      reload.call(definition),
    );
    this.emit('reloaded', { name: canonical });
  }

  /** Loads every registered module that is not running yet, in registration order, each after what it requires. */
  async loadAll(): Promise<void> {
    const loadWithRequirements = async (name: string, chain: readonly string[]): Promise<void> => {
      if (this.#running.has(name) || chain.includes(name)) return;
      for (const required of this.#definitions.get(name)?.requires ?? []) {
        const canonical = canonicalName(required);
        if (this.#definitions.has(canonical)) await loadWithRequirements(canonical, [...chain, name]);
      }
      await this.load(name);
    };
    for (const [name, definition] of this.#definitions) {
      if (definition.autoload?.() === false) continue;
      await loadWithRequirements(name, []);
    }
  }

  /**
   * Unloads every running module in reverse order, core ones included: used at shutdown, where a
   * module that fails to unload must not keep the others running. Returns the failures.
   */
  async unloadAll(): Promise<Error[]> {
    const failures: Error[] = [];
    for (const name of [...this.#definitions.keys()].reverse()) {
      if (!this.#running.has(name)) continue;
      try {
        await this.#definitions.get(name)!.unload();
      } catch (error) {
        failures.push(error instanceof Error ? error : new Error(String(error)));
      }
      this.#running.delete(name);
      this.emit('change', { name, status: 'Not Running' });
    }
    return failures;
  }

  /** A running module by any spelling of its name; NotFoundError (as Asterisk's 404) when it is not running. */
  #runningModule(name: string): { canonical: string; definition: ModuleDefinition } {
    const canonical = canonicalName(name);
    const definition = this.#definitions.get(canonical);
    if (!definition || !this.#running.has(canonical)) throw new NotFoundError('Module not found in running modules');
    return { canonical, definition };
  }

  async #transition(name: string, failure: string, action: () => Promise<void> | void): Promise<void> {
    if (this.#busy.has(name)) throw new ConflictError(failure);
    const wasRunning = this.#running.has(name);
    this.#busy.add(name);
    try {
      await action();
    } catch (cause) {
      // The reason goes to the client: "unknown error" alone leaves an operator guessing which line
      // of which file a reload refused.
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new ConflictError(reason === '' ? failure : `${failure}: ${reason.slice(0, MAX_REASON_CHARS)}`, { cause });
    } finally {
      this.#busy.delete(name);
    }
    const isRunning = this.#running.has(name);
    if (isRunning !== wasRunning) this.emit('change', { name, status: isRunning ? 'Running' : 'Not Running' });
  }

  /** The module's own users, plus every running module that requires it (as Asterisk's loader counts them). */
  #useCount(name: string): number {
    let count = this.#definitions.get(name)?.useCount?.() ?? 0;
    for (const [other, definition] of this.#definitions) {
      if (this.#running.has(other) && definition.requires?.some((required) => canonicalName(required) === name)) count += 1;
    }
    return count;
  }

  #record(name: string): ModuleRecord {
    const definition = this.#definitions.get(name)!;
    return {
      name,
      description: definition.description,
      use_count: this.#useCount(name),
      status: this.#running.has(name) ? 'Running' : 'Not Running',
      support_level: definition.supportLevel,
    };
  }
}
