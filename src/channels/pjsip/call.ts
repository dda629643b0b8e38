// One SIP call as a channel's driver: an INVITE session with its dialog and its RTP stream.
// Inbound (UAS): the INVITE's server transaction stays open while the application decides; ring
// → 180, progress → 183 with SDP, answer → 200 with SDP (retransmitted until ACK), a hang-up
// before the answer → a final error mapped from the cause, after it → BYE. Outbound (UAC): call()
// sends the INVITE with an offer; 180/183/2xx drive the channel; a hang-up before the answer
// sends CANCEL, after it BYE. The far end's BYE or CANCEL hangs the channel up.
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelDriver, Indication } from '../../core/channels/technology.ts';
import type { Frame } from '../../media/frame.ts';
import type { RtpStatistics } from '../../media/rtp/statistics.ts';
import { Dialog } from '../../sip/dialog.ts';
import { newCallId, newTag, SipRequest, type SipResponse } from '../../sip/message.ts';
import { acceptAnswer, answerOffer, buildOffer, type LocalMedia, type NegotiatedMedia, type SdpCodec } from '../../sip/sdp/index.ts';
import type { ClientTransaction, ServerTransaction, TransactionLayer } from '../../sip/transaction.ts';
import type { Destination } from '../../sip/transport.ts';
import { formatUri, type Uri } from '../../sip/uri.ts';
import type { RtpStream } from './rtp-stream.ts';

/**
 * Q.850 cause → SIP final status for a call refused before it was answered (Asterisk's
 * hangup_cause2sip; a cause it does not list, normal clearing among them, ends the INVITE with
 * 603 Decline as Asterisk's session termination does).
 */
export function statusForCause(cause: number): number {
  switch (cause) {
    case 1: // unallocated number
    case 2:
    case 3:
      return 404;
    case 17:
      return 486;
    case 18:
      return 408;
    case 19:
      return 480;
    case 20:
      return 480;
    case 21:
      return 403;
    case 22:
      return 410;
    case 27:
      return 502;
    case 28:
      return 484;
    case 29:
      return 501;
    case 31:
      return 480;
    case 34:
    case 38:
    case 41:
    case 42:
    case 44:
    case 47:
      return 503;
    case 58:
    case 65:
    case 88:
      return 488;
    case 127:
      return 500;
    default:
      return 603;
  }
}

/** SIP final status from the far end → Q.850 cause (Asterisk's hangup_sip2cause). */
export function causeForStatus(status: number): number {
  switch (status) {
    case 401:
    case 402:
    case 403:
    case 407:
      return 21;
    case 404:
    case 410:
      return 1;
    case 408:
      return 18;
    case 480:
      return 19;
    case 483:
      return 25;
    case 484:
      return 28;
    case 486:
    case 600:
      return 17;
    case 487:
      return 16;
    case 488:
    case 606:
      return 58;
    case 500:
      return 127;
    case 501:
      return 29;
    case 502:
      return 27;
    case 503:
      return 34;
    case 504:
      return 102;
    case 603:
      return 21;
    default:
      if (status >= 500) return 41;
      return 127;
  }
}

/** The cause a far end gave in `Reason: Q.850;cause=N`, if any. */
export function causeFromReason(value: string | undefined, fallback: number): number {
  const match = value === undefined ? null : /Q\.850\s*;\s*cause\s*=\s*(\d{1,3})/i.exec(value);
  return match ? Number(match[1]) : fallback;
}

export interface CallServices {
  readonly layer: TransactionLayer;
  readonly log: Logger;
  /** Our address as written in Contact and SDP. */
  readonly signallingHost: string;
  readonly signallingPort: number;
  readonly mediaAddress: string;
  readonly userAgent: string;
  /** Binds this call's RTP socket. */
  openStream(call: SipCall): Promise<RtpStream>;
  /** The call ended: forget its dialog and transactions. */
  forget(call: SipCall): void;
}

type Side = { kind: 'inbound'; invite: SipRequest; tx: ServerTransaction; offer?: Buffer } | { kind: 'outbound'; target: Uri; destination: Destination; fromUser: string };

export class SipCall implements ChannelDriver {
  channel!: Channel;
  dialog: Dialog | undefined;
  stream: RtpStream | undefined;
  #media: NegotiatedMedia | undefined;
  #localSdp: string | undefined;
  #sessionVersion = 1;
  readonly #sessionId = String(Math.floor(Math.random() * 1e9));
  #answered = false;
  #ended = false;
  #inviteTx: ClientTransaction | undefined;
  #inviteRequest: SipRequest | undefined;
  #progressSent = false;
  #ackReceived = false;
  #pendingHangup: number | undefined;
  readonly callId: string;

  constructor(
    private readonly services: CallServices,
    private readonly side: Side,
    private readonly codecs: readonly SdpCodec[],
    readonly endpointId: string,
  ) {
    this.callId = side.kind === 'inbound' ? (side.invite.callId() ?? newCallId()) : newCallId();
  }

  /** Binds the channel (the driver factory calls this before ChannelCreated). */
  attach(channel: Channel): this {
    this.channel = channel;
    return this;
  }

  get ended(): boolean {
    return this.#ended;
  }

  // ---- inbound --------------------------------------------------------------------------------

  /** Inbound: opens the RTP socket and prepares the answer to the offer (488 if nothing is common). */
  async prepareInbound(): Promise<{ ok: true } | { ok: false; status: number; reason: string }> {
    if (this.side.kind !== 'inbound') return { ok: true };
    this.stream = await this.services.openStream(this);
    if (this.side.offer && this.side.offer.length > 0) {
      const answer = answerOffer(this.side.offer, this.#localMedia());
      if (!answer.ok) return { ok: false, status: answer.status, reason: answer.reason };
      this.#localSdp = answer.sdp;
      this.#applyMedia(answer.media);
    } else {
      // Offer in the 200 (late offer): our SDP is an offer, the answer comes in the ACK.
      this.#localSdp = buildOffer(this.#localMedia());
    }
    const tx = this.side.tx;
    tx.onCancel = (cancel) => this.#farEndCancelled(cancel);
    tx.onAck = (ack) => this.#acked(ack);
    tx.onTimeout = () => this.#ackTimedOut();
    return { ok: true };
  }

  /**
   * No ACK for our 2xx within 64*T1 (RFC 3261 13.3.1.4): the session is not established; the far
   * end is told with BYE and the channel ends (cause 18, no answer from the far end).
   */
  #ackTimedOut(): void {
    if (this.side.kind !== 'inbound' || !this.#answered || this.#ackReceived || this.#ended) return;
    this.services.log.info({ channel: this.channel.name }, 'SIP: no ACK for the 200 OK, ending the call');
    this.#sendBye(18);
    this.#finish();
    if (!this.channel.hangingUp) this.channel.hangup(18, { fromFarEnd: true });
  }

  #farEndCancelled(cancel: SipRequest): void {
    if (this.side.kind !== 'inbound' || this.#answered) return;
    this.side.tx.reply(487, 'Request Terminated');
    this.#finish();
    if (!this.channel.hangingUp) this.channel.hangup(causeFromReason(cancel.get('reason'), 16), { fromFarEnd: true });
  }

  #acked(ack: SipRequest): void {
    this.#ackReceived = true;
    // A late offer is answered in the ACK.
    if (ack.body.length > 0 && !this.#media) {
      const accepted = acceptAnswer(ack.body, this.#localMedia());
      if (accepted.ok) this.#applyMedia(accepted.media);
    }
  }

  #contact(): string {
    return `<sip:${this.endpointId}@${formatHostForUri(this.services.signallingHost)}:${this.services.signallingPort}>`;
  }

  #respond(status: number, withSdp: boolean): void {
    if (this.side.kind !== 'inbound') return;
    const headers: Array<[string, string]> = [['Contact', this.#contact()], ['Allow', ALLOW], ['Server', this.services.userAgent]];
    if (withSdp && this.#localSdp) this.side.tx.reply(status, undefined, headers, this.#localSdp, 'application/sdp');
    else this.side.tx.reply(status, undefined, headers);
  }

  // ---- outbound -------------------------------------------------------------------------------

  call(): void {
    if (this.side.kind !== 'outbound') return;
    void this.#placeCall().catch((error: unknown) => {
      this.services.log.warn({ err: error, channel: this.channel.name }, 'SIP call could not be placed');
      this.#finish();
      if (!this.channel.hangingUp) this.channel.hangup(34, { fromFarEnd: true });
    });
  }

  async #placeCall(): Promise<void> {
    if (this.side.kind !== 'outbound') return;
    this.stream = await this.services.openStream(this);
    if (this.#ended || this.channel.hangingUp) return this.#finish();
    this.#localSdp = buildOffer(this.#localMedia());
    const { target, destination, fromUser } = this.side;
    const localTag = newTag();
    const caller = this.channel.snapshot().caller;
    const display = caller.name ? `"${caller.name.replace(/["\\\r\n]/g, '')}" ` : '';
    const fromNumber = caller.number || fromUser;
    const request = new SipRequest('INVITE', target, [
      ['Max-Forwards', '70'],
      ['From', `${display}<sip:${escapeUserPart(fromNumber)}@${formatHostForUri(this.services.signallingHost)}>;tag=${localTag}`],
      ['To', `<${formatUri(target)}>`],
      ['Call-ID', this.callId],
      ['CSeq', '1 INVITE'],
      ['Contact', this.#contact()],
      ['Allow', ALLOW],
      ['User-Agent', this.services.userAgent],
    ]);
    request.body = Buffer.from(this.#localSdp);
    request.set('Content-Type', 'application/sdp');
    this.#inviteRequest = request;
    this.#inviteTx = this.services.layer.sendRequest(request, destination, {
      onResponse: (response) => this.#outboundResponse(response),
      onTimeout: () => this.#outboundFailed(18),
      onTransportError: () => this.#outboundFailed(27),
    });
    if (this.#pendingHangup !== undefined) this.hangup(this.#pendingHangup);
  }

  #outboundResponse(response: SipResponse): void {
    const status = response.status;
    if (status < 200) {
      if (status === 180 || status === 181 || status === 182) this.channel.remoteIndication('ringing');
      else if (status === 183) {
        this.#takeAnswer(response);
        this.channel.remoteIndication('progress');
      }
      return;
    }
    if (status < 300) {
      // Every 2xx (also a retransmitted one) is ACKed; the first one answers the call.
      const dialog = this.dialog ?? (this.#inviteRequest ? Dialog.asUac(this.#inviteRequest, response) : undefined);
      if (!dialog) return;
      if (!this.dialog) {
        this.dialog = dialog;
        dialog.state = 'confirmed';
      }
      const seq = response.cseq()?.seq ?? 1;
      const ack = dialog.createAck(seq);
      const hop = dialog.nextHop(this.side.kind === 'outbound' ? this.side.destination.transport : 'UDP');
      if (hop) void this.services.layer.sendAck(ack, hop).catch(() => undefined);
      if (this.#answered) return;
      this.#answered = true;
      this.#takeAnswer(response);
      if (this.#ended || this.channel.hangingUp) {
        this.#sendBye();
        return;
      }
      this.channel.remoteIndication('answer');
      return;
    }
    this.#outboundFailed(causeFromReason(response.get('reason'), causeForStatus(status)));
  }

  #takeAnswer(response: SipResponse): void {
    if (this.#media || response.body.length === 0) return;
    const accepted = acceptAnswer(response.body, this.#localMedia());
    if (accepted.ok) this.#applyMedia(accepted.media);
  }

  #outboundFailed(cause: number): void {
    if (this.#answered) return;
    this.#finish();
    if (!this.channel.hangingUp) this.channel.hangup(cause, { fromFarEnd: true });
  }

  // ---- in-dialog requests from the far end ------------------------------------------------------

  /** A request inside this call's dialog (BYE, re-INVITE, INFO, ...). */
  inDialog(request: SipRequest, tx: ServerTransaction): void {
    const dialog = this.dialog;
    if (dialog && dialog.receiveRequest(request) === 'lower') {
      tx.reply(500, 'Server Internal Error');
      return;
    }
    switch (request.method) {
      case 'BYE': {
        tx.reply(200);
        this.#finish();
        if (!this.channel.hangingUp) this.channel.hangup(causeFromReason(request.get('reason'), 16), { fromFarEnd: true });
        return;
      }
      case 'INVITE': {
        // A re-INVITE (hold, a new address): answer with our SDP, take the new parameters.
        if (request.body.length > 0) {
          const answer = answerOffer(request.body, { ...this.#localMedia(), sessionVersion: ++this.#sessionVersion });
          if (!answer.ok) {
            tx.reply(answer.status);
            return;
          }
          this.#localSdp = answer.sdp;
          this.#applyMedia(answer.media);
        }
        tx.reply(200, undefined, [['Contact', this.#contact()], ['Allow', ALLOW]], this.#localSdp, 'application/sdp');
        return;
      }
      case 'INFO': {
        const digit = /Signal\s*=\s*([0-9A-D*#])/i.exec(request.body.toString('latin1'));
        tx.reply(200);
        if (digit) {
          const duration = /Duration\s*=\s*(\d{1,5})/i.exec(request.body.toString('latin1'));
          this.channel.receiveDigit(digit[1].toUpperCase(), duration ? Number(duration[1]) : 100);
        }
        return;
      }
      case 'UPDATE':
      case 'OPTIONS':
        tx.reply(200, undefined, [['Allow', ALLOW]]);
        return;
      default:
        tx.reply(405, undefined, [['Allow', ALLOW]]);
    }
  }

  // ---- ChannelDriver ---------------------------------------------------------------------------

  answer(): void {
    if (this.side.kind !== 'inbound' || this.#answered || this.#ended) return;
    this.#answered = true;
    this.#respond(200, true);
    const response = this.side.tx.lastResponse;
    if (response) {
      const dialog = Dialog.asUas(this.side.invite, response);
      if (dialog) {
        dialog.state = 'confirmed';
        this.dialog = dialog;
      }
    }
  }

  indicate(indication: Indication): void {
    if (this.side.kind !== 'inbound' || this.#answered || this.#ended) return;
    if (indication === 'ringing') this.#respond(180, false);
    else if (indication === 'progress' && !this.#progressSent) {
      this.#progressSent = true;
      this.#respond(183, true);
    } else if (indication === 'busy') this.hangup(17);
    else if (indication === 'congestion') this.hangup(34);
  }

  hangup(cause: number): void {
    if (this.#ended) return;
    if (this.side.kind === 'inbound') {
      if (!this.#answered) this.side.tx.reply(statusForCause(cause), undefined, [['Reason', `Q.850;cause=${cause}`]]);
      else this.#sendBye(cause);
      this.#finish();
      return;
    }
    if (!this.#inviteTx) {
      // Not sent yet (the RTP socket is being bound): send nothing at all.
      this.#pendingHangup = cause;
      this.#finish();
      return;
    }
    if (!this.#answered) this.#inviteTx.cancel();
    else this.#sendBye(cause);
    this.#finish();
  }

  #sendBye(cause = 16): void {
    const dialog = this.dialog;
    if (!dialog || dialog.state === 'terminated') return;
    dialog.state = 'terminated';
    const bye = dialog.createRequest('BYE', { headers: [['Reason', `Q.850;cause=${cause}`]] });
    const hop = dialog.nextHop(this.side.kind === 'outbound' ? this.side.destination.transport : this.side.tx.source.transport);
    if (!hop) return;
    if (this.side.kind === 'inbound' && this.side.tx.source.connection && !this.side.tx.source.connection.closed) hop.connection = this.side.tx.source.connection;
    try {
      this.services.layer.sendRequest(bye, hop, {});
    } catch (error) {
      this.services.log.debug({ err: error }, 'BYE not sent');
    }
  }

  sendDigit(digit: string, durationMs: number): void {
    this.stream?.sendDigit(digit, durationMs);
  }

  writeFrame(frame: Frame): void {
    this.stream?.writeFrame(frame);
  }

  rtpStatistics(): RtpStatistics | undefined {
    return this.stream?.statistics();
  }

  /** Called by the stream on each media clock tick with received audio. */
  deliver(frame: Frame): void {
    if (!this.#ended && !this.channel.hangingUp) this.channel.deliver(frame);
  }

  digit(digit: string, durationMs: number): void {
    if (!this.#ended && !this.channel.hangingUp) this.channel.receiveDigit(digit, durationMs);
  }

  // ---- helpers ----------------------------------------------------------------------------------

  #localMedia(): LocalMedia {
    return {
      address: this.services.mediaAddress,
      port: this.stream?.localPort ?? 9,
      codecs: this.codecs,
      sessionId: this.#sessionId,
      sessionVersion: this.#sessionVersion,
      userAgent: 'Patchbay',
    };
  }

  #applyMedia(media: NegotiatedMedia): void {
    this.#media = media;
    this.stream?.configure({
      codec: media.codec,
      payloadType: media.payloadType,
      telephoneEventPt: media.telephoneEventPt,
      remoteAddress: media.remoteAddress,
      remotePort: media.remotePort,
      direction: media.direction,
    });
  }

  #finish(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.stream?.close();
    this.services.forget(this);
  }
}

export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE, INFO, UPDATE';

function formatHostForUri(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Characters a SIP URI user part may carry unescaped (RFC 3261 25.1, user-unreserved and unreserved). */
function escapeUserPart(user: string): string {
  return user.replace(/[^A-Za-z0-9\-_.!~*'()&=+$,;?/]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
}


