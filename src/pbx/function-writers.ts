// The dialplan functions' view of a core, held by each core's channel table: writable functions
// other subsystems provide (TALK_DETECT is the media engine's), and the services every function
// may use (astdb, globals, dialplan, device states), attached by the core. Two servers in one
// process never share either, and nothing is looked up behind a module-level WeakMap.
import type { Channel } from '../core/channels/channel.ts';
import type { FunctionServices } from '../pbx/function-services.ts';

export type FunctionWriter = (channel: Channel, args: string, value: string) => void;

export class FunctionWriters {
  readonly #writers = new Map<string, FunctionWriter>();
  #services: FunctionServices | undefined;

  /** Registers the writer of function `name` (case-insensitive). */
  register(name: string, writer: FunctionWriter): void {
    this.#writers.set(name.toUpperCase(), writer);
  }

  get(name: string): FunctionWriter | undefined {
    return this.#writers.get(name.toUpperCase());
  }

  /** What functions on this table's channels may use; undefined until the core attaches it. */
  get services(): FunctionServices | undefined {
    return this.#services;
  }

  attach(services: FunctionServices): void {
    this.#services = services;
  }
}
