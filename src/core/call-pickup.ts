// The pickup extension (features.conf pickupexten) as Asterisk's ast_pickup_call does it for a
// phone that dialed it: the oldest ringing channel of the picker's pickup groups is picked up
// (channels/pickup.ts), `pickupsound` is played to the picker once connected; when nothing could be
// picked up, `pickupfailsound` is played to the answered picker before the technology hangs it up.
import type { Channel } from './channels/channel.ts';
import type { Channels } from './channels/channels.ts';
import { findByGroup, pickUp } from './channels/pickup.ts';
import type { PickupFeatures } from './features-conf.ts';
import type { Logger } from 'pino';

interface CallPickupDeps {
  readonly channels: Channels;
  readonly log: Logger;
  /** Plays a sound to a channel and resolves when it ends (or could not play). */
  playAndWait(channel: Channel, sound: string): Promise<void>;
}

export class CallPickup {
  #features: PickupFeatures;
  readonly #deps: CallPickupDeps;

  constructor(features: PickupFeatures, deps: CallPickupDeps) {
    this.#features = features;
    this.#deps = deps;
  }

  /** The extension that picks up (empty: none), read by technologies as a call comes in. */
  get extension(): string {
    return this.#features.pickupExten;
  }

  /** ast_pickup_call: true when `picker` took a ringing call's place. */
  async call(picker: Channel): Promise<boolean> {
    const { log, channels } = this.#deps;
    const target = findByGroup(picker, channels.list());
    if (target) {
      log.info({ channel: picker.name, target: target.name }, `Pickup ${target.name} attempt by ${picker.name}`);
      if (pickUp(picker, target)) {
        const sound = this.#features.pickupSound;
        if (sound) void this.#deps.playAndWait(picker, sound);
        return true;
      }
      log.warn({ channel: picker.name, target: target.name }, `Pickup ${target.name} failed by ${picker.name}`);
    }
    log.debug({ channel: picker.name }, `No call pickup possible for ${picker.name}`);
    const fail = this.#features.pickupFailSound;
    if (fail && !picker.hangingUp) {
      if (!picker.answered) picker.answer();
      await this.#deps.playAndWait(picker, fail);
    }
    return false;
  }
}
