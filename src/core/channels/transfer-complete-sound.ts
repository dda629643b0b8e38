// ATTENDED_TRANSFER_COMPLETE_SOUND, as Asterisk 22's ast_bridge_transfer_attended plays it for
// every attended transfer, a SIP phone's REFER with Replaces included: when the second leg (the
// call to the target) is in a bridge, the sound named on the second leg, else on the first, is
// played to everyone else in that bridge (ast_bridge_channel_write_playfile: the target) just
// before the transfer is carried out. The playback is the channel's own: it goes on across the
// transfer, over what the target's bridge carries, as Asterisk's bridge channel plays it.
import type { Channel } from './channel.ts';

/** A sound name longer than this is not played (a variable anyone with ARI or the dialplan set). */
const MAX_SOUND_LENGTH = 256;

/** Plays a sound to one channel; throws when it cannot (the core's playbacks). */
export type PlaySound = (channel: Channel, sound: string) => void;

/**
 * Plays the completion sound to `hearers` (the second leg's bridge fellows) when either leg names
 * one. Nothing when the second leg is in no bridge (no hearers) or the name is unusable.
 */
export function playTransferCompleteSound(firstLeg: Channel, secondLeg: Channel, hearers: readonly Channel[], play: PlaySound | undefined): void {
  if (!play || hearers.length === 0) return;
  const sound = (secondLeg.getVariable('ATTENDED_TRANSFER_COMPLETE_SOUND') || firstLeg.getVariable('ATTENDED_TRANSFER_COMPLETE_SOUND'))?.trim();
  if (!sound || sound.length > MAX_SOUND_LENGTH) return;
  for (const hearer of hearers) {
    if (hearer.hangingUp) continue;
    try {
      play(hearer, sound);
    } catch {
      // A sound that cannot be played (unknown file, a playback refused) does not stop the transfer.
    }
  }
}
