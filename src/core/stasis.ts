// Stasis: channels under the control of an ARI application. Entering raises StasisStart to the
// application and subscribes it to the channel; leaving (hangup, continue, move) raises StasisEnd.
import type { Applications } from './applications.ts';
import type { Channel, DialplanLocation } from './channels/channel.ts';
import { ConflictError } from './errors.ts';
import { formatAriDate } from './time.ts';
import type { CoreEventOf } from '../spec/events.ts';

export interface EnterOptions {
  /** The channel this one replaces (after a transfer), reported as `replace_channel`. */
  readonly replaceChannel?: Channel;
  /** Entered through the Stasis() dialplan application (which resumes the dialplan on continue). */
  readonly fromDialplan?: boolean;
}

/** Where a channel goes after `continue`: back to the dialplan at this place. */
export type ContinueHandler = (channel: Channel, location: Partial<DialplanLocation>) => void;

export class Stasis {
  private continueHandler: ContinueHandler | undefined;
  private readonly fromDialplan = new WeakSet<Channel>();

  constructor(private readonly applications: Applications) {}

  /** The dialplan executor registers how to resume channels that did not come from Stasis(). */
  onContinue(handler: ContinueHandler): void {
    this.continueHandler = handler;
  }

  /** Puts the channel under the application's control; false when the application is not active. */
  enter(channel: Channel, app: string, args: readonly string[], options: EnterOptions = {}): boolean {
    if (channel.hangingUp || !this.applications.isActive(app)) return false;
    channel.stasis = { app, args: [...args] };
    if (options.fromDialplan) this.fromDialplan.add(channel);
    else this.fromDialplan.delete(channel);
    this.applications.subscribeInternal(app, 'channel', channel.id);
    const event: CoreEventOf<'StasisStart'> = { type: 'StasisStart', timestamp: formatAriDate(), args: [...args], channel: channel.snapshot() };
    if (options.replaceChannel) event.replace_channel = options.replaceChannel.snapshot();
    this.applications.sendTo(app, event);
    channel.once('hangup', () => this.leave(channel));
    return true;
  }

  /** Releases the channel from its application, raising StasisEnd. */
  leave(channel: Channel): void {
    const control = channel.stasis;
    if (!control) return;
    // What the channel is part of lets go first (a bridge raises ChannelLeftBridge before StasisEnd).
    channel.emit('stasis-leaving', { app: control.app });
    channel.stasis = undefined;
    this.applications.sendTo(control.app, { type: 'StasisEnd', timestamp: formatAriDate(), channel: channel.snapshot() });
    channel.emit('stasis-left', { app: control.app });
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
