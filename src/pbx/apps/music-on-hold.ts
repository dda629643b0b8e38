// MusicOnHold([class[,duration]]): plays a music-on-hold class to the channel (unknown classes fall
// back to `default`) for `duration` seconds, or until hangup without one, then stops it and goes on.
// Like app_moh it does not answer the channel; when music on hold cannot start (res_musiconhold.so
// not running) it logs a warning and the dialplan goes on at once.
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { waitOnChannel } from '../../core/channels/wait.ts';

export const musicOnHold: DialplanApplication = {
  name: 'MusicOnHold',
  synopsis: 'Plays music on hold (class, duration)',
  async execute(channel, [mohClass, duration], services): Promise<AppOutcome> {
    const seconds = Number.parseFloat(duration ?? '');
    const timed = Number.isFinite(seconds) && seconds > 0;
    const moh = services.musicOnHold;
    try {
      if (!moh) throw new Error('music on hold is not part of this server');
      moh.start(channel, mohClass || undefined);
    } catch (err) {
      services.log.warn(
        { channel: channel.name, class: mohClass || 'default', err },
        `Unable to start music on hold class '${mohClass || 'default'}' on channel ${channel.name}`,
      );
      return 'next';
    }
    try {
      if (!timed) {
        if (!channel.hangingUp) await new Promise<void>((resolve) => channel.once('hangup', () => resolve()));
        return 'stop';
      }
      return (await waitOnChannel(channel, seconds * 1000)) ? 'next' : 'stop';
    } finally {
      if (!channel.hangingUp) moh.stop(channel);
    }
  },
};
