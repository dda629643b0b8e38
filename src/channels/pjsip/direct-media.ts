// Direct media on a SIP call (chan_pjsip's RTP glue: get_rtp_peer / set_rtp_peer): while the core
// asks for it (core/channels/remote-media.ts: a two-party bridge or Dial() pair nothing else on the
// server listens to), the far end is re-INVITEd (or sent an UPDATE, direct_media_method) with an
// offer whose c=/m= name the other leg's far end, and the codec the two already use, so its RTP
// goes there and none comes here; when the core takes it back, a new offer names our own address
// again. Our RTP port stays bound meanwhile, so the media returns as soon as the far end answers.
// The offers go through the call's offer queue (call-offers.ts): never two at once, a new o=
// version each (RFC 3264 §8), a 491 retried, a refusal leaving the media where it was.
// What each leg must have (bridge_native_rtp's compatibility checks, as far as SIP goes) is
// directMediaRefusal's: a refusal names why, and the core keeps the media here.
import type { MediaDirection, NegotiatedMedia, SdpCodec } from '../../sip/sdp/index.ts';
import type { DtmfMode } from './config/types.ts';
import { dtmfInband } from './dtmf-info.ts';

/** The endpoint's direct-media options (a PjsipEndpoint has them). */
export interface DirectMediaOptions {
  readonly directMedia?: boolean;
  readonly directMediaMethod?: 'invite' | 'reinvite' | 'update';
  readonly directMediaGlareMitigation?: 'none' | 'outgoing' | 'incoming';
  readonly disableDirectMediaOnNat?: boolean;
  readonly rtpSymmetric?: boolean;
  readonly forceRport?: boolean;
}

/** What the decision reads of one leg. */
export interface DirectMediaLeg {
  readonly options: DirectMediaOptions;
  /** What the last offer/answer agreed (undefined before any). */
  readonly negotiated: NegotiatedMedia | undefined;
  readonly dtmfMode: DtmfMode;
  /** The address the far end's signalling comes from (NAT: another than its SDP's). */
  readonly signallingAddress: string;
  /** Hold either way: the far end holds, or a passthrough hold of ours is in force. */
  readonly held: boolean;
  /** This leg's far end was asked to send to the other leg's far end (its direct offer went). */
  readonly sendsDirect?: boolean;
}

/** Where a far end is asked to send its media instead of to us. */
export interface DirectTarget {
  readonly address: string;
  readonly port: number;
  readonly codec: SdpCodec;
}

/** Why `own` cannot send its media straight to `peer`'s far end now; undefined: it can. */
export function directMediaRefusal(own: DirectMediaLeg, peer: DirectMediaLeg): string | undefined {
  if (own.options.directMedia !== true || peer.options.directMedia !== true) return 'direct_media=no';
  const mine = own.negotiated;
  const theirs = peer.negotiated;
  if (!mine || !theirs || mine.remoteAddress === undefined || theirs.remoteAddress === undefined) return 'no media agreed';
  // SRTP keys and WebRTC's DTLS are each leg's with us: the two far ends share none.
  if (mine.srtp || theirs.srtp || mine.security || theirs.security) return 'secure media';
  // No transcoding between them: each must already use the codec the other does.
  if (mine.codec !== theirs.codec || mine.clockRate !== theirs.clockRate) return 'codecs differ';
  // Digits in the audio are detected here, and INFO digits cannot become RFC 4733 events on the way.
  if (dtmfInband(own.dtmfMode, mine) || dtmfInband(peer.dtmfMode, theirs)) return 'inband DTMF';
  if ((mine.telephoneEventPt === undefined) !== (theirs.telephoneEventPt === undefined)) return 'DTMF modes differ';
  if (own.held || peer.held) return 'held';
  if (natted(own) || natted(peer)) return 'NAT';
  return undefined;
}

/** disable_direct_media_on_nat: the far end's signalling (force_rport) or media (rtp_symmetric) comes from elsewhere than its SDP says. */
function natted(leg: DirectMediaLeg): boolean {
  const { options } = leg;
  if (options.disableDirectMediaOnNat !== true || (options.forceRport !== true && options.rtpSymmetric !== true)) return false;
  return leg.negotiated?.remoteAddress !== leg.signallingAddress;
}

/** What direct media needs of its call (call.ts's SipCall gives it). */
export interface DirectMediaCall extends DirectMediaLeg {
  /** We placed the call (our dialog's UAC). */
  readonly outbound: boolean;
  readonly ended: boolean;
  /** The dialog is confirmed both ways (an inbound call's ACK came): an offer may go. */
  readonly confirmed: boolean;
  /** Where our next offers point the far end's media (undefined: at us); call-media.ts writes it into the SDP. */
  setTarget(target: DirectTarget | undefined): void;
  /** Sends a fresh offer with the current target (a re-INVITE or an UPDATE); false when none can go. */
  offer(method: 'INVITE' | 'UPDATE', refused: () => void): boolean;
}

/** The parts of a SIP call direct media reads and moves (its SDP side, its hold, its offers). */
export interface DirectMediaParts {
  readonly options: DirectMediaOptions;
  readonly sdp: { readonly negotiated: NegotiatedMedia | undefined; readonly dtmfMode: DtmfMode; directTarget: DirectTarget | undefined };
  readonly hold: { readonly heldByFarEnd: boolean; readonly offeredDirection: MediaDirection };
  readonly offers: { reinvite(direction: MediaDirection, refused: () => void, method: 'INVITE' | 'UPDATE'): boolean };
}

/** A SIP call as direct media sees it, from its parts (call.ts). */
export function directMediaCall(parts: DirectMediaParts, signallingAddress: string, outbound: boolean, state: { ended(): boolean; confirmed(): boolean }): DirectMediaCall {
  const { sdp, hold, offers } = parts;
  return {
    options: parts.options,
    get negotiated() { return sdp.negotiated; },
    get dtmfMode() { return sdp.dtmfMode; },
    signallingAddress,
    get held() { return hold.heldByFarEnd; },
    get sendsDirect() { return sdp.directTarget !== undefined; },
    outbound,
    get ended() { return state.ended(); },
    get confirmed() { return state.confirmed(); },
    setTarget: (target) => void (sdp.directTarget = target),
    offer: (method, refused) => offers.reinvite(hold.offeredDirection, refused, method),
  };
}

export class CallDirectMedia {
  /** Where the far end was last asked to send (undefined: to us). */
  #target: DirectTarget | undefined;
  /** What the next offer must say, once the dialog is confirmed (undefined: nothing waits). */
  #pending = false;
  /** direct_media_glare_mitigation applies to the first direct offer of a call only. */
  #firstOffer = true;
  /** The other leg while the core asks for direct media (undefined: none asked). */
  #peer: DirectMediaLeg | undefined;

  constructor(private readonly call: DirectMediaCall) {}

  /** The far end sends to another leg's far end now (as asked). */
  get direct(): boolean {
    return this.#target !== undefined;
  }

  /**
   * The other leg's far end sends its media straight to ours: what the core would write to our far
   * end meanwhile (a two-party bridge's silence) is not sent, or it would reach the phone as a second
   * stream. With glare mitigation the other leg may still send here: then ours goes on.
   */
  get peerSendsHere(): boolean {
    return this.#peer?.sendsDirect === true;
  }

  /** The core's ask (ChannelDriver.remoteMedia): `peer` its other leg (null: not a SIP call), undefined: back to us. */
  point(peer: DirectMediaLeg | null | undefined): boolean {
    if (peer === undefined || peer === null || this.call.ended || directMediaRefusal(this.call, peer) !== undefined) {
      this.#peer = undefined;
      if (peer !== undefined) return false;
      this.#move(undefined);
      return true;
    }
    this.#peer = peer;
    const media = peer.negotiated;
    if (!media || media.remoteAddress === undefined) return false;
    const target = { address: media.remoteAddress, port: media.remotePort, codec: media.codec };
    // chan_pjsip's glare mitigation: the first direct offer is left to the other leg on calls of this direction.
    const glare = this.call.options.directMediaGlareMitigation ?? 'none';
    if (this.#firstOffer && this.#target === undefined && ((glare === 'outgoing' && this.call.outbound) || (glare === 'incoming' && !this.call.outbound))) {
      this.#firstOffer = false;
      return true;
    }
    this.#move(target);
    return true;
  }

  /** The dialog got confirmed (the ACK came): an offer that waited for it goes now. */
  confirmed(): void {
    if (this.#pending) this.#send();
  }

  #move(target: DirectTarget | undefined): void {
    const now = this.#target;
    if (now === target || (now && target && now.address === target.address && now.port === target.port && now.codec === target.codec)) return;
    this.#firstOffer = false;
    this.#target = target;
    this.call.setTarget(target);
    this.#send();
  }

  #send(): void {
    if (this.call.ended) return;
    if (!this.call.confirmed) {
      this.#pending = true;
      return;
    }
    this.#pending = false;
    const method = this.call.options.directMediaMethod === 'update' ? 'UPDATE' : 'INVITE';
    const asked = this.#target;
    // Refused (488 …): the far end still sends where it did; our next offers say so again.
    const refused = (): void => {
      if (this.#target !== asked) return;
      this.#target = undefined;
      this.call.setTarget(undefined);
    };
    if (!this.call.offer(method, refused)) refused();
  }
}
