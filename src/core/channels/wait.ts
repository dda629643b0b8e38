// Waiting inside a dialplan application without outliving the channel.
import type { Channel } from './channel.ts';
import { timerDelay } from '../../util/timer-delay.ts';

/** Resolves true after `ms`, or false as soon as the channel hangs up. */
export function waitOnChannel(channel: Channel, ms: number): Promise<boolean> {
  if (channel.hangingUp) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onHangup = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      channel.off('hangup', onHangup);
      resolve(true);
    }, timerDelay(ms));
    channel.once('hangup', onHangup);
  });
}

/** Resolves when the channel leaves Stasis: 'continued' back to the dialplan, or 'hungup'. */
export function waitForStasisExit(channel: Channel): Promise<'continued' | 'hungup'> {
  return new Promise((resolve) => {
    const onLeft = (): void => {
      channel.off('stasis-left', onLeft);
      // Leaving because of a hangup raises 'stasis-left' from the hangup listener.
      resolve(channel.hangingUp ? 'hungup' : 'continued');
    };
    channel.on('stasis-left', onLeft);
  });
}
