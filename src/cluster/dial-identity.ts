// dial with a caller (`POST /channels/{id}/dial?caller=` ) when the caller lives on another member
// than the dialled channel: one server hands the dialled channel the caller's inheritable
// variables, its caller id as the connected line, and its language (core/channels/inherit.ts). In a
// cluster the caller's member reads that identity (`read`) and the dialled channel's member takes
// it (`apply`) just before the dial itself is served there; the dial then finds no caller and goes
// on as it would. Each member answers these on its own subject; every field is bounded, since a
// message may come from anywhere on the bus.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import { MAX_CHANNEL_VARIABLES } from '../core/variable-limits.ts';
import { parseJsonObject } from '../util/json-object.ts';

export function identitySubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.dial-identity`;
}

/** What a dialled channel takes from its caller. */
export interface CallerIdentity {
  readonly caller: { readonly name: string; readonly number: string };
  readonly language: string;
  /** As the dialled channel holds them: `__NAME` kept, `_NAME` as NAME. */
  readonly variables: ReadonlyArray<readonly [string, string]>;
}

type IdentityMessage = { readonly op: 'read'; readonly channel: string } | { readonly op: 'apply'; readonly channel: string; readonly identity: CallerIdentity };
type IdentityReply = { readonly status: 200; readonly identity?: CallerIdentity } | { readonly status: 400 | 404 | 500; readonly message: string };

const MAX_ID = 256;
const MAX_FIELD = 256;
const MAX_VALUE = 4096;

const text = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;

function readIdentity(value: unknown): CallerIdentity | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { caller, language, variables } = value as Record<string, unknown>;
  if (caller === null || typeof caller !== 'object' || !text(language, MAX_FIELD) || !Array.isArray(variables) || variables.length > MAX_CHANNEL_VARIABLES) return undefined;
  const { name, number } = caller as Record<string, unknown>;
  if (!text(name, MAX_FIELD) || !text(number, MAX_FIELD)) return undefined;
  const pairs: Array<readonly [string, string]> = [];
  for (const pair of variables) {
    if (!Array.isArray(pair) || pair.length !== 2 || !text(pair[0], MAX_FIELD) || pair[0] === '' || !text(pair[1], MAX_VALUE)) return undefined;
    pairs.push([pair[0], pair[1]]);
  }
  return { caller: { name, number }, language, variables: pairs };
}

function decodeMessage(data: Uint8Array): IdentityMessage | undefined {
  const value = parseJsonObject(data);
  if (typeof value === 'string') return undefined;
  const { op, channel, identity } = value;
  if (!text(channel, MAX_ID) || channel === '') return undefined;
  if (op === 'read') return { op, channel };
  const read = op === 'apply' ? readIdentity(identity) : undefined;
  return read ? { op: 'apply', channel, identity: read } : undefined;
}

function decodeReply(data: Uint8Array): IdentityReply | undefined {
  const value = parseJsonObject(data);
  if (typeof value === 'string') return undefined;
  const { status, identity } = value;
  if (status !== 200) return undefined;
  const read = identity === undefined ? undefined : readIdentity(identity);
  return read ? { status: 200, identity: read } : { status: 200 };
}

export class DialIdentity {
  #subscription: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly node: string,
    private readonly core: Core,
    private readonly requestTimeoutMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.#subscription = this.nc.subscribe(identitySubject(this.prefix, this.node), { callback: (error, msg) => void (error ? undefined : this.#onMessage(msg)) });
  }

  stop(): void {
    this.#subscription?.unsubscribe();
  }

  /**
   * Hands the dialled channel (on `calleeNode`) the identity of its caller (on `callerNode`).
   * Best effort, as one server's inheritance is: a caller gone meanwhile leaves the channel as it was.
   */
  async inherit(caller: string, callerNode: string, callee: string, calleeNode: string): Promise<void> {
    const read = await this.#ask(callerNode, { op: 'read', channel: caller });
    if (read?.status !== 200 || !('identity' in read) || read.identity === undefined) return;
    await this.#ask(calleeNode, { op: 'apply', channel: callee, identity: read.identity });
  }

  async #ask(node: string, message: IdentityMessage): Promise<IdentityReply | undefined> {
    if (node === this.node) return this.handle(message);
    try {
      return decodeReply((await this.nc.request(identitySubject(this.prefix, node), new TextEncoder().encode(JSON.stringify(message)), { timeout: this.requestTimeoutMs })).data);
    } catch {
      return undefined;
    }
  }

  #onMessage(msg: Msg): void {
    const message = decodeMessage(msg.data);
    let reply: IdentityReply;
    try {
      reply = message === undefined ? { status: 400, message: 'Bad dial identity message' } : this.handle(message);
    } catch (error) {
      this.log.warn({ err: error }, 'cluster: a dial identity message failed');
      reply = { status: 500, message: 'The cluster member failed to handle a dial identity message' };
    }
    if (msg.reply) msg.respond(new TextEncoder().encode(JSON.stringify(reply)));
  }

  handle(message: IdentityMessage): IdentityReply {
    const channel = this.core.channels.get(message.channel);
    if (!channel) return { status: 404, message: 'Channel not found' };
    if (message.op === 'read') {
      const variables: Array<readonly [string, string]> = [];
      for (const name of channel.variableNames()) {
        const value = channel.getVariable(name);
        if (value === undefined || !name.startsWith('_') || name.length > MAX_FIELD || value.length > MAX_VALUE) continue;
        variables.push([name.startsWith('__') ? name : name.slice(1), value]);
        if (variables.length >= MAX_CHANNEL_VARIABLES) break;
      }
      return { status: 200, identity: { caller: { name: channel.caller.name, number: channel.caller.number }, language: channel.language, variables } };
    }
    const { identity } = message;
    for (const [name, value] of identity.variables) {
      if (channel.variableCount >= MAX_CHANNEL_VARIABLES && channel.getVariable(name) === undefined) break;
      try {
        channel.setVariable(name, value);
      } catch {
        // Full in bytes or a name the channel refuses: the rest are not inherited, as on one server.
        break;
      }
    }
    if (identity.caller.name || identity.caller.number) channel.setConnected({ ...identity.caller });
    if (identity.language !== '') channel.language = identity.language;
    return { status: 200 };
  }
}
