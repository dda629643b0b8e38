// Hold on a SIP call, both ways, as chan_pjsip does it.
// - The far end holds: a re-INVITE whose offer is sendonly or inactive, or whose address is
//   0.0.0.0 (RFC 3264 §8.4, and RFC 2543's older form). The channel raises ChannelHold (and
//   ChannelUnhold when a later offer sends again) and indicates the hold to whatever it is
//   connected to (Dial's peer), as Asterisk queues AST_CONTROL_HOLD.
// - The peer holds (indicate hold): with moh_passthrough=no (Asterisk's default) the far end hears
//   music on hold generated here until unhold; with moh_passthrough=yes the far end is re-INVITEd
//   sendonly (hold) and sendrecv (unhold) instead, and hears what its phone plays. When the far end
//   refuses that re-INVITE (488, 500 …: RFC 3261 §14.1, the session stays as it was) the far end's
//   state is what it was before: a later hold re-INVITEs again, a later unhold sends nothing. The
//   channel's own hold (ARI, CHANNEL(onhold)) stays as asked, as Asterisk's does.
import type { Channel } from '../../core/channels/channel.ts';
import type { MediaDirection, NegotiatedMedia } from '../../sip/sdp/index.ts';
import type { CallEnvironment } from './call-types.ts';

/** What hold needs of its call (call.ts's SipCall): taken as this, hold does not depend on the call. */
export interface HoldableCall {
  readonly channel: Channel | undefined;
  readonly ended: boolean;
  /** A re-INVITE offering `direction`; false when there is no dialog to send it in. `refused`: the far end refused it. */
  reinvite(direction: MediaDirection, refused: () => void): boolean;
}

/** The music class a holding phone suggests when its endpoint names none: Asterisk's moh_suggest default. */
const SUGGESTED_MUSIC_CLASS = 'default';

/** Whether an offer's media puts us on hold: they do not want to receive, or gave no address. */
function holdsUs(media: NegotiatedMedia): boolean {
  return media.direction === 'recvonly' || media.direction === 'inactive' || media.remoteAddress === undefined;
}

export class CallHold {
  /** The far end holds us. */
  #heldByFarEnd = false;

  /** The far end holds the call (its last offer was sendonly, inactive or c=0.0.0.0). */
  get heldByFarEnd(): boolean {
    return this.#heldByFarEnd;
  }
  /** The peer holds the far end (music plays, or the far end was re-INVITEd sendonly). */
  #holdingFarEnd = false;

  /** The direction an offer of ours says now: sendonly while a passthrough hold lasts. */
  get offeredDirection(): MediaDirection {
    return this.passthrough && this.#holdingFarEnd ? 'sendonly' : 'sendrecv';
  }
  /** Counts the passthrough re-INVITEs: only the refusal of the latest one undoes its change. */
  #passthroughOffers = 0;

  constructor(
    private readonly call: HoldableCall,
    private readonly services: Pick<CallEnvironment, 'log' | 'musicOnHold'>,
    private readonly passthrough: boolean,
    /** The endpoint's moh_suggest: the class its hold suggests (ChannelHold's musicclass, what its peer plays). */
    private readonly suggestedClass: string = SUGGESTED_MUSIC_CLASS,
  ) {}

  /** The far end's re-INVITE offer was answered with `media`. */
  farEndOffered(media: NegotiatedMedia): void {
    const held = holdsUs(media);
    if (held === this.#heldByFarEnd) return;
    this.#heldByFarEnd = held;
    const channel = this.call.channel;
    if (!channel || channel.hangingUp) return;
    // Asterisk names the endpoint's moh_suggest (default `default`) as the class to play.
    if (held) channel.heldByFarEnd(this.suggestedClass);
    else channel.unheldByFarEnd();
    channel.remoteIndication(held ? 'hold' : 'unhold');
  }

  /** The peer (the bridge, Dial's other party, ARI) puts the far end on hold or takes it off. */
  indicate(indication: 'hold' | 'unhold', musicClass: string | undefined): void {
    const channel = this.call.channel;
    if (!channel || channel.hangingUp || this.call.ended) return;
    const hold = indication === 'hold';
    if (hold === this.#holdingFarEnd) return;
    this.#holdingFarEnd = hold;
    if (this.passthrough) {
      const offer = ++this.#passthroughOffers;
      const refused = (): void => {
        if (offer === this.#passthroughOffers) this.#holdingFarEnd = !hold;
      };
      if (!this.call.reinvite(hold ? 'sendonly' : 'sendrecv', refused)) {
        this.#holdingFarEnd = !hold;
        this.services.log.debug({ channel: channel.name }, 'hold passthrough: no dialog to re-INVITE');
      }
      return;
    }
    const moh = this.services.musicOnHold;
    if (hold) moh?.start(channel, musicClass);
    else moh?.stop(channel);
  }
}
