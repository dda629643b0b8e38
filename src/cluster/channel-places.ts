// Which member each channel is on, for the web console's member column and `GET /admin/cluster/channels`.
// ARI's channel JSON has no such field (as Asterisk's has none), so each member answers, on a
// subject of its own, the ids of the channels it holds, and the asking member puts the answers
// together. Ids are no secret among members: the subject carries no user, and no ARI request.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Core } from '../control/core.ts';
import type { Membership } from './membership.ts';

/** Most channel ids one member answers (a member holds at most a few thousand calls). */
export const MAX_CHANNEL_IDS = 20_000;

export interface ChannelPlacesAnswer {
  /** The member that answered (this one). */
  readonly node: string;
  /** asterisk_id → member, for the events' `asterisk_id` of channels that appear later. */
  readonly members: Readonly<Record<string, string>>;
  /** channel id → the member holding it. */
  readonly channels: Readonly<Record<string, string>>;
  /** Members that did not answer in time: their channels are missing. */
  readonly unanswered: readonly string[];
}

export interface ChannelPlacesOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  readonly core: Core;
  readonly membership: Membership;
  readonly requestTimeoutMs: number;
  readonly log: Logger;
}

const subjectOf = (prefix: string, node: string): string => `${prefix}.node.${node}.channel-ids`;

export class ChannelPlaces {
  private subscription: Subscription | undefined;

  constructor(private readonly options: ChannelPlacesOptions) {}

  start(): void {
    const { nc, prefix, node } = this.options;
    this.subscription = nc.subscribe(subjectOf(prefix, node), {
      callback: (err, msg) => {
        if (err) return;
        msg.respond(JSON.stringify(this.ownIds()));
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  async gather(): Promise<ChannelPlacesAnswer> {
    const { nc, prefix, node, membership, requestTimeoutMs } = this.options;
    const channels: Record<string, string> = {};
    for (const id of this.ownIds()) channels[id] = node;
    const unanswered: string[] = [];
    await Promise.all(
      membership.others().map(async (member) => {
        try {
          const reply = await nc.request(subjectOf(prefix, member.node), '', { timeout: requestTimeoutMs });
          for (const id of decodeIds(reply.data)) channels[id] ??= member.node;
        } catch (err) {
          this.options.log.warn({ err, node: member.node }, 'cluster member did not say which channels it holds');
          unanswered.push(member.node);
        }
      }),
    );
    const members = Object.fromEntries(membership.list().map((member) => [member.asteriskId, member.node]));
    return { node, members, channels, unanswered: unanswered.sort() };
  }

  private ownIds(): string[] {
    return this.options.core.channels.list().slice(0, MAX_CHANNEL_IDS).map((channel) => channel.id);
  }
}

/** Another member's answer: a JSON array of ids, bounded; anything else counts as none. */
export function decodeIds(data: Uint8Array): string[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(data).toString('utf8'));
    if (!Array.isArray(parsed)) return [];
    return parsed.slice(0, MAX_CHANNEL_IDS).filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 256);
  } catch {
    return [];
  }
}
