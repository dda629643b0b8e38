// Channel broadcast (Asterisk's res_stasis_broadcast): StasisBroadcast() offers a channel to every
// matching Stasis application with CallBroadcast; the first `POST /events/claim` wins and the
// channel enters Stasis for the winner. The claim state of each channel lives here, keyed by the
// channel's unique id, from the broadcast until the winner's Stasis session ends (or the broadcast
// ends unclaimed).
import { randomInt } from 'node:crypto';
import type { Applications } from './applications.ts';
import type { AppFilter } from '../util/app-filter.ts';
import type { Channel } from './channels/channel.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { CoreEventOf } from '../spec/events.ts';
import { timerDelay } from '../util/timer-delay.ts';

export interface BroadcastOptions {
  /** Applications whose name it matches receive the broadcast; undefined = every application. */
  readonly filter?: AppFilter;
  /** Send CallClaimed to the matching applications when the channel is claimed. */
  readonly notifyClaimed: boolean;
}

export type ClaimResult = 'claimed' | 'conflict' | 'not-found';

/** How a broadcast ended: the winner's name, or undefined when nobody claimed it in time. */
export interface BroadcastOutcome {
  readonly winner: string | undefined;
}

interface BroadcastContext {
  readonly channel: Channel;
  readonly options: BroadcastOptions;
  winner: string | undefined;
  /** The wait is over: an unclaimed context refuses claims from now on. */
  finished: boolean;
  /** Ends the wait early (a claim). */
  wake: (() => void) | undefined;
}

export class ChannelBroadcasts {
  /** Keyed by channel id. One entry per channel at most: at most one per live channel. */
  private readonly contexts = new Map<string, BroadcastContext>();

  constructor(private readonly applications: Applications) {}

  /** Channels being broadcast or under their winner's control (tests, metrics). */
  get size(): number {
    return this.contexts.size;
  }

  /**
   * Offers the channel, then waits up to `timeoutMs` for a claim (or the hangup). The claim state
   * is kept after a win: call `finish` once the winner's Stasis session is over.
   */
  async broadcast(channel: Channel, timeoutMs: number, options: BroadcastOptions): Promise<BroadcastOutcome> {
    // A new broadcast of the same channel replaces the previous one (failover dialplans).
    const context: BroadcastContext = { channel, options, winner: undefined, finished: false, wake: undefined };
    this.contexts.set(channel.id, context);
    const event: CoreEventOf<'CallBroadcast'> = {
      type: 'CallBroadcast',
      timestamp: formatAriDate(),
      channel: channel.snapshot(),
      caller: channel.caller.number ?? '',
      called: channel.location.exten ?? '',
    };
    // Random order, so that no application is always told first.
    const recipients = this.matching(options.filter);
    for (let i = recipients.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [recipients[i], recipients[j]] = [recipients[j]!, recipients[i]!];
    }
    for (const name of recipients) this.applications.sendTo(name, event);

    if (context.winner === undefined && timeoutMs > 0 && !channel.hangingUp) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          channel.off('hangup', done);
          context.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, timerDelay(timeoutMs));
        channel.once('hangup', done);
        context.wake = done;
      });
    }
    context.finished = true;
    if (context.winner === undefined) this.release(channel, context);
    return { winner: context.winner };
  }

  /** The winner's session is over: claims for the channel answer 404 again. */
  finish(channel: Channel): void {
    const context = this.contexts.get(channel.id);
    if (context) this.release(channel, context);
  }

  /** `POST /events/claim`: the first claim wins; later ones conflict; no broadcast, not found. */
  claim(channelId: string, application: string): ClaimResult {
    const context = this.contexts.get(channelId);
    if (!context) return 'not-found';
    // Claimed first: a late claim after a win is a conflict, not a missing channel.
    if (context.winner !== undefined) return 'conflict';
    if (context.finished) return 'not-found';
    context.winner = application;
    context.wake?.();
    if (context.options.notifyClaimed) {
      const event: CoreEventOf<'CallClaimed'> = {
        type: 'CallClaimed',
        timestamp: formatAriDate(),
        channel: context.channel.snapshot(),
        winner_app: application,
      };
      for (const name of this.matching(context.options.filter)) this.applications.sendTo(name, event);
    }
    return 'claimed';
  }

  private matching(filter: AppFilter | undefined): string[] {
    const names: string[] = [];
    for (const app of this.applications.list()) {
      if (app.active && (!filter || filter.matches(app.name))) names.push(app.name);
    }
    return names;
  }

  private release(channel: Channel, context: BroadcastContext): void {
    // Only this broadcast's own state: a later StasisBroadcast of the channel may have replaced it.
    if (this.contexts.get(channel.id) === context) this.contexts.delete(channel.id);
  }
}
