// A typed façade over node:events, so listeners and emitters agree on each event's payload.
import { EventEmitter } from 'node:events';

export type EventMap = Record<string, unknown>;

export class TypedEmitter<Events extends EventMap> {
  readonly #emitter = new EventEmitter();

  on<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    this.#emitter.on(event, listener);
    return this;
  }

  off<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    this.#emitter.off(event, listener);
    return this;
  }

  once<E extends keyof Events & string>(event: E, listener: (payload: Events[E]) => void): this {
    this.#emitter.once(event, listener);
    return this;
  }

  protected emit<E extends keyof Events & string>(event: E, payload: Events[E]): void {
    this.#emitter.emit(event, payload);
  }
}
