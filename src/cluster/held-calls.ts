// The calls-wait grace of an application across members (docs/events-resume.md, docs/cluster.md
// "Calls wait for an away application on every member"). While an application's resumable
// connection is away from its home, the home announces the end of its grace period in the apps
// bucket, and each member's relay turns into a held stand-in: channels sent to the application
// there wait as they do on one server, and each member hangs its own up at that same deadline.
// When the application is back at its home, the home lets the channels waiting on the other
// members in one at a time, oldest first across members, so that their StasisStart events reach
// the application in the order the calls arrived (each member releasing its own at once would
// interleave members at random). Each member answers on its own subject; a message may come
// from anywhere on the bus, so every field is bounded.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import { parseJsonObject } from '../util/json-object.ts';

export function heldCallsSubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.held-calls`;
}

/** Most waiting channels one member lists for one application (the rest enter when the relay is back). */
const MAX_LISTED = 10_000;
const MAX_NAME = 256;

type HeldMessage = { readonly op: 'list'; readonly app: string } | { readonly op: 'release'; readonly app: string; readonly channel: string };

interface WaitingEntry {
  readonly id: string;
  readonly since: number;
}

const name = (value: unknown): value is string => typeof value === 'string' && value !== '' && value.length <= MAX_NAME;

function decodeMessage(data: Uint8Array): HeldMessage | undefined {
  const value = parseJsonObject(data);
  if (typeof value === 'string') return undefined;
  const { op, app, channel } = value;
  if (!name(app)) return undefined;
  if (op === 'list') return { op, app };
  if (op === 'release' && name(channel)) return { op, app, channel };
  return undefined;
}

function decodeList(data: Uint8Array): WaitingEntry[] {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(data));
    const channels = value !== null && typeof value === 'object' ? (value as Record<string, unknown>).channels : undefined;
    if (!Array.isArray(channels)) return [];
    const entries: WaitingEntry[] = [];
    for (const entry of channels.slice(0, MAX_LISTED)) {
      const { id, since } = (entry ?? {}) as Record<string, unknown>;
      if (name(id) && typeof since === 'number' && Number.isFinite(since)) entries.push({ id, since });
    }
    return entries;
  } catch {
    return [];
  }
}

export interface HeldCallsOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  readonly core: Core;
  readonly requestTimeoutMs: number;
  readonly log: Logger;
  /** The other live members' nodes. */
  readonly otherNodes: () => readonly string[];
}

export class HeldCalls {
  #subscription: Subscription | undefined;
  /** Channels let in by this member on a home's word (metrics, tests). */
  released = 0;

  constructor(private readonly options: HeldCallsOptions) {}

  start(): void {
    const { nc, prefix, node } = this.options;
    this.#subscription = nc.subscribe(heldCallsSubject(prefix, node), { callback: (error, msg) => void (error ? undefined : this.#onMessage(msg)) });
  }

  stop(): void {
    this.#subscription?.unsubscribe();
  }

  /**
   * The application is back at its home (this member): the channels waiting for it on the other
   * members enter one at a time, oldest first. Each member's answer to a release comes after the
   * StasisStart it published, on the same connection, so the stream holds them in this order.
   * Stops when the application goes away again; a member that does not answer is passed over (its
   * channels enter when its relay learns the application is back).
   */
  async releaseInOrder(application: string): Promise<number> {
    const nodes = this.options.otherNodes();
    const lists = await Promise.all(nodes.map(async (node) => (await this.#ask(node, { op: 'list', app: application }).then(decodeList, () => [])).map((entry, index) => ({ ...entry, node, index }))));
    // Oldest first across members; a member's own order (its arrival order) on a tie.
    const waiting = lists.flat().sort((a, b) => a.since - b.since || (a.node === b.node ? a.index - b.index : a.node < b.node ? -1 : 1));
    let entered = 0;
    for (const entry of waiting) {
      if (!this.options.core.applications.isActive(application)) break;
      try {
        const reply = JSON.parse(new TextDecoder().decode(await this.#ask(entry.node, { op: 'release', app: application, channel: entry.id }))) as { released?: unknown };
        if (reply.released === true) entered++;
      } catch (err) {
        this.options.log.warn({ err, application, node: entry.node, channel: entry.id }, 'cluster: a waiting channel of another member was not released in order');
      }
    }
    return entered;
  }

  async #ask(node: string, message: HeldMessage): Promise<Uint8Array> {
    const { nc, prefix, requestTimeoutMs } = this.options;
    return (await nc.request(heldCallsSubject(prefix, node), new TextEncoder().encode(JSON.stringify(message)), { timeout: requestTimeoutMs })).data;
  }

  #onMessage(msg: Msg): void {
    const message = decodeMessage(msg.data);
    let reply: unknown;
    try {
      reply = message === undefined ? { status: 400, message: 'Bad held-calls message' } : this.handle(message);
    } catch (error) {
      this.options.log.warn({ err: error }, 'cluster: a held-calls message failed');
      reply = { status: 500, message: 'The cluster member failed to handle a held-calls message' };
    }
    if (msg.reply) msg.respond(new TextEncoder().encode(JSON.stringify(reply)));
  }

  handle(message: HeldMessage): unknown {
    const stasis = this.options.core.stasis;
    if (message.op === 'list') {
      return { channels: stasis.waitingSince(message.app).slice(0, MAX_LISTED).map((entry) => ({ id: entry.channel.id, since: entry.since })) };
    }
    const released = stasis.releaseWaiting(message.app, message.channel);
    if (released) this.released++;
    return { released };
  }
}
