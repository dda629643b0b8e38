// A channel's hang-up handler stack, as Asterisk's pbx_hangup_handler.c keeps it: subroutines that
// CHANNEL(hangup_handler_push|pop|wipe) stack up and that run, last pushed first, once the channel
// hung up (after its `h` extension, before it is destroyed). This file keeps the stacks; running
// them is the executor's (pbx.ts), which this object tells when a channel gets its first handler so
// that even a channel no dialplan runs (a Stasis channel, a Dial() callee) runs its handlers.
import type { Channel } from '../core/channels/channel.ts';
import { InvalidError } from '../core/errors.ts';
import { MAX_VARIABLE_VALUE_LENGTH } from '../core/variable-limits.ts';

/**
 * Handlers one channel may stack. Asterisk has no bound; one here keeps a dialplan loop (or an ARI
 * client) from growing a channel's stack, and its hang-up work, without end.
 */
export const MAX_HANGUP_HANDLERS = 100;

/**
 * Fills in what the handler text leaves out, as Asterisk does when it is pushed (app_stack's
 * expand_gosub_args): `[[context,]exten,]priority[(args)]` becomes `context,exten,priority[(args)]`
 * with the channel's current context and extension for those omitted or empty. The priority
 * (a number or a label) is resolved only when the handler runs.
 */
export function expandHandler(channel: Channel, handler: string): string {
  const open = handler.indexOf('(');
  const label = open < 0 ? handler : handler.slice(0, open);
  let args: string | undefined;
  if (open >= 0) {
    const close = handler.lastIndexOf(')');
    args = close > open ? handler.slice(open + 1, close) : handler.slice(open + 1);
  }
  const parts = label.split(',');
  let [context, exten, priority] = parts.length >= 3 ? parts : parts.length === 2 ? ['', parts[0], parts[1]] : ['', '', parts[0]];
  if (exten === '') exten = channel.location.exten;
  if (context === '') context = channel.location.context;
  const place = `${context},${exten},${priority}`;
  return args ? `${place}(${args})` : place;
}

export class HangupHandlers {
  /** Each channel's handlers, the most recently pushed last (the top of the stack). */
  readonly #stacks = new WeakMap<Channel, string[]>();

  /** @param onFirstPush told when a channel's stack goes from empty to one handler. */
  constructor(private readonly onFirstPush: (channel: Channel) => void) {}

  /** CHANNEL(hangup_handler_push)=handler: stacks it on top; an empty value pushes nothing. */
  push(channel: Channel, handler: string): void {
    if (handler === '') return;
    if (handler.length > MAX_VARIABLE_VALUE_LENGTH) throw new InvalidError(`A hang-up handler is at most ${MAX_VARIABLE_VALUE_LENGTH} characters`);
    let stack = this.#stacks.get(channel);
    if (!stack) {
      stack = [];
      this.#stacks.set(channel, stack);
    }
    if (stack.length >= MAX_HANGUP_HANDLERS) throw new InvalidError(`Too many hang-up handlers on the channel: at most ${MAX_HANGUP_HANDLERS}`);
    stack.push(expandHandler(channel, handler));
    if (stack.length === 1) this.onFirstPush(channel);
  }

  /** CHANNEL(hangup_handler_pop)=handler: drops the top handler, then pushes `handler` if given. */
  pop(channel: Channel, handler: string): void {
    this.#stacks.get(channel)?.pop();
    this.push(channel, handler);
  }

  /** CHANNEL(hangup_handler_wipe)=handler: drops every handler, then pushes `handler` if given. */
  wipe(channel: Channel, handler: string): void {
    this.#stacks.delete(channel);
    this.push(channel, handler);
  }

  /** Whether the channel has a handler to run. */
  has(channel: Channel): boolean {
    return (this.#stacks.get(channel)?.length ?? 0) > 0;
  }

  /** Takes the top handler off to run it (each runs at most once); undefined when none is left. */
  take(channel: Channel): string | undefined {
    return this.#stacks.get(channel)?.pop();
  }

  /** The channel's handlers, the one to run first first (Asterisk's `core show hanguphandlers` order). */
  list(channel: Channel): string[] {
    return [...(this.#stacks.get(channel) ?? [])].reverse();
  }
}
