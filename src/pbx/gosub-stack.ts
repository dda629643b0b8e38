// The Gosub stack of a channel: each frame remembers where Return goes and the variables made local
// to it (the ${ARGn} arguments and LOCAL() ones), whose earlier values come back when the frame
// is left, as app_stack's frames do. Depth is bounded, so a runaway recursion ends the call
// instead of growing without limit.
import type { Channel } from '../core/channels/channel.ts';
import { InvalidError } from '../core/errors.ts';

/** Frames one channel may stack up; a Gosub beyond this fails and the call hangs up. */
export const MAX_GOSUB_DEPTH = 100;
/** Arguments one Gosub may pass (${ARG1}..${ARG100}). */
export const MAX_GOSUB_ARGS = 100;

export interface ReturnPoint {
  readonly context: string;
  readonly exten: string;
  /** The priority to resume at (the one after the Gosub). */
  readonly priority: number;
}

interface Frame {
  readonly returnTo: ReturnPoint;
  /** Each local variable's value before the frame made it local (undefined: was unset). */
  readonly saved: Map<string, string | undefined>;
  readonly argCount: number;
}

const stacks = new WeakMap<Channel, Frame[]>();

export function gosubDepth(channel: Channel): number {
  return stacks.get(channel)?.length ?? 0;
}

/** Makes `name` local to `frame` (remembering its value the first time) and sets it. */
function setLocal(channel: Channel, frame: Frame, name: string, value: string | undefined): void {
  if (!frame.saved.has(name)) frame.saved.set(name, channel.getVariable(name));
  channel.setVariable(name, value);
}

/** Pushes a frame with `args` as ${ARG1}..; arguments of the caller's frame beyond them read empty. */
export function pushFrame(channel: Channel, returnTo: ReturnPoint, args: readonly string[]): void {
  let stack = stacks.get(channel);
  if (!stack) {
    stack = [];
    stacks.set(channel, stack);
  }
  if (stack.length >= MAX_GOSUB_DEPTH) throw new InvalidError(`Gosub stack is full (${MAX_GOSUB_DEPTH} frames)`);
  const previousArgs = stack.at(-1)?.argCount ?? 0;
  const frame: Frame = { returnTo, saved: new Map(), argCount: args.length };
  stack.push(frame);
  for (let i = 0; i < Math.max(args.length, previousArgs); i++) {
    setLocal(channel, frame, `ARG${i + 1}`, i < args.length ? args[i] : undefined);
  }
}

/** Pops the top frame, restoring what it made local; undefined when the stack is empty. */
export function popFrame(channel: Channel): ReturnPoint | undefined {
  const frame = stacks.get(channel)?.pop();
  if (!frame) return undefined;
  for (const [name, value] of frame.saved) channel.setSystemVariable(name, value);
  return frame.returnTo;
}

/** LOCAL(name)=value: a variable that lives as long as the current Gosub frame. */
export function writeLocal(channel: Channel, name: string, value: string): void {
  const frame = stacks.get(channel)?.at(-1);
  const variable = name.trim();
  if (!frame) throw new InvalidError('LOCAL() is only meaningful inside a Gosub');
  if (variable === '') throw new InvalidError('LOCAL() needs a variable name');
  setLocal(channel, frame, variable, value);
}

/** LOCAL(name) reads the variable as the current frame sees it. */
export function readLocal(channel: Channel, name: string): string | undefined {
  return channel.getVariable(name.trim());
}

/**
 * LOCAL_PEEK(n,name): the value `name` had `n` frames up (0 is the current frame): the value the
 * first frame above that level to make it local saved, or the current one if none did.
 */
export function peekLocal(channel: Channel, args: string): string | undefined {
  const comma = args.indexOf(',');
  if (comma < 0) return undefined;
  const levels = Number.parseInt(args.slice(0, comma), 10);
  const name = args.slice(comma + 1).trim();
  const stack = stacks.get(channel) ?? [];
  if (!Number.isInteger(levels) || levels < 0) return undefined;
  // The lowest of the top `levels` frames to have made it local saved what the level above saw.
  for (let index = Math.max(0, stack.length - levels); index < stack.length; index++) {
    if (stack[index].saved.has(name)) return stack[index].saved.get(name);
  }
  return channel.getVariable(name);
}
