// Stasis: channels under the control of an ARI application. Entering raises StasisStart to the
// application and subscribes it to the channel; leaving (hangup, continue, move) raises StasisEnd.
import type { Applications } from './applications.ts';
import { CAUSE } from './channels/causes.ts';
import type { Channel, DialplanLocation } from './channels/channel.ts';
import type { PerCallApplications } from './per-call-applications.ts';
import { ConflictError } from './errors.ts';
import { formatAriDate } from '../util/ari-date.ts';
import type { CoreEventOf } from '../spec/events.ts';

export interface EnterOptions {
  /** The channel this one replaces (after a transfer), reported as `replace_channel`. */
  readonly replaceChannel?: Channel;
  /** Entered through the Stasis() dialplan application (which resumes the dialplan on continue). */
  readonly fromDialplan?: boolean;
  /**
   * How a wait for an away application ended (see `enter`). Without it a channel the application
   * did not come back for is hung up, as one sent to an application that is not registered.
   */
  readonly onWaitEnded?: (outcome: 'entered' | 'unavailable' | 'hungup') => void;
}

/** `entered`: StasisStart was raised; `waiting`: the application is away and the channel waits for it. */
export type EnterResult = 'entered' | 'waiting' | false;

interface WaitingChannel {
  readonly channel: Channel;
  /** When it began to wait (ms since the epoch: comparable across cluster members, whose clocks agree). */
  readonly since: number;
  readonly args: readonly string[];
  readonly options: EnterOptions;
  readonly onHangup: () => void;
}

/** Where a channel goes after `continue`: back to the dialplan at this place. */
export type ContinueHandler = (channel: Channel, location: Partial<DialplanLocation>) => void;

export class Stasis {
  private continueHandler: ContinueHandler | undefined;
  private readonly fromDialplan = new WeakSet<Channel>();
  /** Channels waiting for an application whose resumable connection is away, in arrival order. */
  private readonly waiting = new Map<string, WaitingChannel[]>();
  /** What an unanswered waiting channel is given to hear. */
  waitingIndication: 'ringing' | 'none' = 'ringing';
  /** Stasis() falls back to these for an application nobody has registered (ARI per-call outbound WebSockets). */
  perCallApplications: PerCallApplications | undefined;

  constructor(private readonly applications: Applications) {
    applications.onAvailability((app, change) => {
      if (change === 'connected') this.release(app);
      else if (change === 'hold-ended') this.giveUp(app);
    });
  }

  /** Channels waiting for the application (tests, snapshots). */
  waitingFor(app: string): readonly Channel[] {
    return (this.waiting.get(app) ?? []).map((entry) => entry.channel);
  }

  /** Channels waiting for the application with when each began to wait, in arrival order. */
  waitingSince(app: string): ReadonlyArray<{ readonly channel: Channel; readonly since: number }> {
    return (this.waiting.get(app) ?? []).map((entry) => ({ channel: entry.channel, since: entry.since }));
  }

  /**
   * Lets one waiting channel enter the application now, ahead of the others (a cluster releases
   * the channels waiting on its members in their arrival order across members); false when the
   * channel does not wait for it.
   */
  releaseWaiting(app: string, channelId: string): boolean {
    const queue = this.waiting.get(app);
    const index = queue?.findIndex((entry) => entry.channel.id === channelId) ?? -1;
    if (!queue || index < 0) return false;
    const [entry] = queue.splice(index, 1);
    if (queue.length === 0) this.waiting.delete(app);
    entry!.channel.off('hangup', entry!.onHangup);
    if (entry!.channel.hangingUp) return false;
    this.enterNow(entry!.channel, app, entry!.args, entry!.options);
    entry!.options.onWaitEnded?.('entered');
    return true;
  }

  /** The dialplan executor registers how to resume channels that did not come from Stasis(). */
  onContinue(handler: ContinueHandler): void {
    this.continueHandler = handler;
  }

  /**
   * Puts the channel under the application's control; false when the application is not active.
   * While the application's resumable connection is away (its reconnect grace period), the channel
   * waits for it instead ('waiting'): it enters when the application is back, and when the grace
   * period ends first, `options.onWaitEnded('unavailable')` runs (by default the channel is hung up).
   */
  enter(channel: Channel, app: string, args: readonly string[], options: EnterOptions = {}): EnterResult {
    if (channel.hangingUp) return false;
    if (this.applications.isActive(app)) {
      this.enterNow(channel, app, args, options);
      return 'entered';
    }
    if (!this.applications.isHeld(app)) return false;
    this.wait(channel, app, args, options);
    return 'waiting';
  }

  /**
   * `enter` for a caller that can wait (dialplan applications): resolves once the channel is in
   * the application ('entered'), could not get there ('unavailable': not registered, or its grace
   * period ended), or hung up while waiting.
   */
  enterWhenAvailable(channel: Channel, app: string, args: readonly string[], options: Omit<EnterOptions, 'onWaitEnded'> = {}): Promise<'entered' | 'unavailable' | 'hungup'> {
    return new Promise((resolve) => {
      const result = this.enter(channel, app, args, { ...options, onWaitEnded: resolve });
      if (result === false) resolve('unavailable');
      else if (result === 'entered') resolve('entered');
    });
  }

  private wait(channel: Channel, app: string, args: readonly string[], options: EnterOptions): void {
    // The application's log gets the channel's events meanwhile: the client sees them on resume.
    this.applications.subscribeInternal(app, 'channel', channel.id);
    const onHangup = (): void => {
      const queue = this.waiting.get(app);
      const index = queue?.findIndex((entry) => entry.channel === channel) ?? -1;
      if (queue && index >= 0) queue.splice(index, 1);
      if (queue?.length === 0) this.waiting.delete(app);
      options.onWaitEnded?.('hungup');
    };
    channel.once('hangup', onHangup);
    let queue = this.waiting.get(app);
    if (!queue) this.waiting.set(app, (queue = []));
    queue.push({ channel, since: Date.now(), args: [...args], options, onHangup });
    if (this.waitingIndication === 'ringing' && channel.state !== 'Up') channel.indicate('ringing');
  }

  /** The application is back: its waiting channels enter, in the order they arrived. */
  private release(app: string): void {
    for (const entry of this.stopWaiting(app)) {
      if (this.applications.isActive(app)) {
        this.enterNow(entry.channel, app, entry.args, entry.options);
        entry.options.onWaitEnded?.('entered');
      } else this.unavailable(entry);
    }
  }

  /** The grace period ended without the application: today's behaviour for each waiting channel. */
  private giveUp(app: string): void {
    for (const entry of this.stopWaiting(app)) this.unavailable(entry);
  }

  /**
   * Ends the wait for `app`: yields its channels in arrival order, each unwatched only as its turn
   * comes (one hanging up while an earlier one is handled still reports it), those hanging up left out.
   */
  private *stopWaiting(app: string): Generator<WaitingChannel> {
    const queue = this.waiting.get(app);
    if (!queue) return;
    this.waiting.delete(app);
    for (const entry of queue) {
      entry.channel.off('hangup', entry.onHangup);
      if (!entry.channel.hangingUp) yield entry;
    }
  }

  private unavailable(entry: WaitingChannel): void {
    if (entry.options.onWaitEnded) entry.options.onWaitEnded('unavailable');
    else entry.channel.hangup(CAUSE.normal);
  }

  private enterNow(channel: Channel, app: string, args: readonly string[], options: EnterOptions): void {
    channel.stasis = { app, args: [...args] };
    if (options.fromDialplan) this.fromDialplan.add(channel);
    else this.fromDialplan.delete(channel);
    this.applications.subscribeInternal(app, 'channel', channel.id);
    const event: CoreEventOf<'StasisStart'> = { type: 'StasisStart', timestamp: formatAriDate(), args: [...args], channel: channel.snapshot() };
    // With replace_channel after it, `channel` is not the last field: serialised whole then.
    if (options.replaceChannel) event.replace_channel = options.replaceChannel.snapshot();
    this.applications.sendTo(app, event, options.replaceChannel ? undefined : channel);
    channel.once('hangup', ({ noticedLater }) => {
      // Hung up by its Local partner: it leaves once that partner is destroyed, as Asterisk's
      // Stasis thread notices the queued hang-up only then (captured: docs/differences.md).
      if (noticedLater) channel.once('hangup-noticed', () => this.leave(channel));
      else this.leave(channel);
    });
  }

  /** Releases the channel from its application, raising StasisEnd. */
  leave(channel: Channel): void {
    const control = channel.stasis;
    if (!control) return;
    // What the channel is part of lets go first (a bridge raises ChannelLeftBridge before StasisEnd).
    channel.leavingStasis(control.app);
    channel.stasis = undefined;
    this.applications.sendTo(control.app, { type: 'StasisEnd', timestamp: formatAriDate(), channel: channel.snapshot() }, channel);
    channel.leftStasis(control.app);
  }

  /** Moves a controlled channel to another application; raises ApplicationMoveFailed when it cannot. */
  move(channel: Channel, app: string, args: readonly string[]): boolean {
    const control = this.require(channel);
    if (!this.applications.isActive(app)) {
      this.applications.sendTo(control.app, {
        type: 'ApplicationMoveFailed',
        timestamp: formatAriDate(),
        destination: app,
        args: [...args],
        channel: channel.snapshot(),
      });
      return false;
    }
    const fromDialplan = this.fromDialplan.has(channel);
    // The same control carries on: the channel leaves one application and enters the other
    // without returning to the dialplan in between.
    channel.stasis = undefined;
    this.applications.sendTo(control.app, { type: 'StasisEnd', timestamp: formatAriDate(), channel: channel.snapshot() });
    // As Asterisk's StasisEnd on a move: the old application gives up the reference it took on
    // entering, so it hears no more of the channel unless it holds one of its own (a subscription,
    // or the one originate took for it).
    this.applications.unsubscribeInternal(control.app, 'channel', channel.id);
    channel.stasis = { app, args: [...args] };
    this.applications.subscribeInternal(app, 'channel', channel.id);
    this.applications.sendTo(app, { type: 'StasisStart', timestamp: formatAriDate(), args: [...args], channel: channel.snapshot() });
    if (fromDialplan) this.fromDialplan.add(channel);
    return true;
  }

  /** Returns the channel to the dialplan at `location` (callers work out the target, e.g. the next priority). */
  continue(channel: Channel, location: Partial<DialplanLocation>): void {
    this.require(channel);
    const fromDialplan = this.fromDialplan.has(channel);
    this.fromDialplan.delete(channel);
    channel.setLocation(location);
    this.leave(channel);
    // A channel that entered through Stasis() resumes when that application returns.
    if (!fromDialplan) this.continueHandler?.(channel, location);
  }

  require(channel: Channel): NonNullable<Channel['stasis']> {
    if (!channel.stasis) throw new ConflictError('Channel not in Stasis application');
    return channel.stasis;
  }
}
