// Direct media between two channels (Asterisk's bridge_native_rtp over the RTP glue): their
// technologies point each far end's media straight at the other's, so none reaches the server. The
// audio relay (audio-relay.ts) owns one for its pair and says when it may run — exactly when the
// relay itself may: two parties, nothing of the core on either channel's audio (a recording, a
// snoop, talk detection, a playback or music on hold, a mute), nothing of the owner's (a bridge's
// playback, recording or third member). Held channels come back too, as bridge_native_rtp stops on
// a hold. Both far ends move or neither: one far end sending to the other while the other still
// sends here would leave one direction dead. The technology's own conditions (codecs, SRTP, NAT,
// the endpoint's direct_media) are its own: it refuses, or tells the channel they changed
// (Channel.mediaPathChanged) and is asked again.
import type { Channel } from './channel.ts';

export class RemoteMedia {
  #direct = false;
  /** Times the two went direct (tests and the curious: did the media come back and go again?). */
  directions = 0;

  constructor(
    private readonly a: Channel,
    private readonly b: Channel,
  ) {}

  /** Whether the far ends send to each other now (as far as the technologies asked them to). */
  get direct(): boolean {
    return this.#direct;
  }

  /** Asks for direct media (`wanted`) or takes it back; asked again on every change. */
  update(wanted: boolean): void {
    const { a, b } = this;
    const both = wanted && !a.onHold && !b.onHold && a.driver.remoteMedia?.(b.driver) === true && b.driver.remoteMedia?.(a.driver) === true;
    if (both) {
      if (!this.#direct) this.directions += 1;
      this.#direct = true;
      return;
    }
    // One side may have said yes before the other said no: both are told, a side not direct ignores it.
    if (!this.#direct && !wanted) return;
    this.#direct = false;
    a.driver.remoteMedia?.(undefined);
    b.driver.remoteMedia?.(undefined);
  }
}
