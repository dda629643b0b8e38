// A small typed event emitter, so listeners and emitters agree on each event's payload.
//
// Emitting is safe against listeners that throw: the failure is reported (see `onListenerError`)
// and the remaining listeners still run, and the emitter goes on. Lifecycle notifications (a
// channel hanging up, a module changing state) must reach everyone and must never leave the
// emitting object half torn down because one listener failed.
//
// Listeners are kept in copy-on-write arrays: `on`/`off` replace the array, `emit` walks the one it
// found without copying it (no allocation per emit). As with node:events, a listener removed while
// an emit is in progress is still called by that emit, and one added is not.

/**
 * Each event's name and payload type. Any object type: interfaces need no index signature, so a
 * misspelt event name does not compile.
 */
export type EventMap = object;

/** Told about a listener that threw (and the payload it was given); must not throw itself. */
export type ListenerErrorReporter = (error: unknown, event: string, payload: unknown) => void;

interface Entry {
  readonly listener: (payload: never) => void;
  readonly once: boolean;
  /** A `once` entry that has been called (or is being called). */
  fired: boolean;
}

const EMPTY: readonly Entry[] = [];

/** Where failures go when the emitter was given no reporter. */
function reportToConsole(error: unknown, event: string): void {
  console.error(`listener for '${event}' failed:`, error);
}

export class TypedEmitter<Events extends EventMap> {
  /** Made at the first listener: an emitter nobody listens to (many per call) holds no table. */
  #listeners: Map<string, readonly Entry[]> | undefined;
  #onListenerError: ListenerErrorReporter;

  constructor(onListenerError: ListenerErrorReporter = reportToConsole) {
    this.#onListenerError = onListenerError;
  }

  /** Replaces where listener failures are reported. */
  protected setListenerErrorReporter(reporter: ListenerErrorReporter): void {
    this.#onListenerError = reporter;
  }

  on<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    this.#add(event, { listener, once: false, fired: false });
    return this;
  }

  once<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    this.#add(event, { listener, once: true, fired: false });
    return this;
  }

  /** Removes the most recently added registration of `listener` (as node:events does). */
  off<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    const entries = this.#listeners?.get(event);
    if (!entries) return this;
    for (let i = entries.length - 1; i >= 0; i--) {
      if (entries[i].listener === listener) {
        this.#removeAt(event, entries, i);
        break;
      }
    }
    return this;
  }

  /** How many listeners `event` has (tests and diagnostics). */
  listenerCount<E extends keyof Events & string>(event: E): number {
    return this.#listeners?.get(event)?.length ?? 0;
  }

  protected emit<E extends keyof Events & string>(event: E, payload: Events[E]): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const entries = listeners.get(event) ?? EMPTY;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry.once) {
        if (entry.fired) continue;
        entry.fired = true;
        const current = listeners.get(event);
        const index = current ? current.indexOf(entry) : -1;
        if (current && index >= 0) this.#removeAt(event, current, index);
      }
      try {
        (entry.listener as (payload: Events[E]) => void)(payload);
      } catch (error) {
        try {
          this.#onListenerError(error, event, payload);
        } catch {
          // A reporter that fails must not stop the notification either.
        }
      }
    }
  }

  #add(event: string, entry: Entry): void {
    const listeners = (this.#listeners ??= new Map());
    const entries = listeners.get(event) ?? EMPTY;
    listeners.set(event, [...entries, entry]);
  }

  #removeAt(event: string, entries: readonly Entry[], index: number): void {
    const listeners = this.#listeners!;
    if (entries.length === 1) {
      // The event's key stays, with no listeners: deleting it could shrink the table, and a shrink
      // makes a new one (the event names are the emitter's declared few, so nothing grows).
      listeners.set(event, EMPTY);
      return;
    }
    // One new array (two slices and their concat made three); the old one may be mid-emit.
    const next = new Array<Entry>(entries.length - 1);
    for (let i = 0, j = 0; i < entries.length; i++) if (i !== index) next[j++] = entries[i];
    listeners.set(event, next);
  }
}

/**
 * A TypedEmitter held by an object that notifies through it (rather than being one): its owner
 * emits, so `emit` is public. Lifecycle notifications of objects that are not emitters themselves
 * (the channel table's created/destroyed, the endpoint registry's changes) go through one.
 */
export class Notifier<Events extends EventMap> extends TypedEmitter<Events> {
  override emit<E extends keyof Events & string>(event: E, payload: Events[E]): void {
    super.emit(event, payload);
  }
}
