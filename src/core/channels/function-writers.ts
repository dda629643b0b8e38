// Writable dialplan functions that other subsystems provide (TALK_DETECT is the media engine's):
// a service each core's channel table owns, so two servers in one process never share a writer
// and nothing is looked up behind a module-level WeakMap.
import type { Channel } from './channel.ts';

export type FunctionWriter = (channel: Channel, args: string, value: string) => void;

export class FunctionWriters {
  readonly #writers = new Map<string, FunctionWriter>();

  /** Registers the writer of function `name` (case-insensitive). */
  register(name: string, writer: FunctionWriter): void {
    this.#writers.set(name.toUpperCase(), writer);
  }

  get(name: string): FunctionWriter | undefined {
    return this.#writers.get(name.toUpperCase());
  }
}
