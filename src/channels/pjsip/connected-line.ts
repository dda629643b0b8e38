// Connected line over SIP, as chan_pjsip and res_pjsip_caller_id do it for Asterisk 22: the phone
// is told whom it now talks to, and a trusted phone's own identity update is taken.
//
// Out (the core indicated the channel's connected line, Channel.indicateConnectedLine): only with
// `send_connected_line` and `send_pai` or `send_rpid`, for a party with a number. An answered call
// (or one we placed, once its dialog is confirmed) gets an UPDATE without SDP when
// `connected_line_method=update` or when the phone's Allow lists UPDATE (chan_pjsip's rule), else a
// re-INVITE with our SDP (call-offers.ts, which waits for an open offer, keeps only the newest and
// sends it again after a 491). One UPDATE of ours is in flight at a time; a newer identity waits for
// its answer and then goes (the latest wins), a 491 sends it again after RFC 3261's wait. An
// unanswered inbound call with `rpid_immediate` gets a 180 (a 183 with `inband_progress`, or once
// Ringing) instead. Every INVITE and UPDATE we send in the dialog and every response to the phone's
// INVITE carries P-Asserted-Identity / Remote-Party-ID with the connected line (caller-identity.ts
// builds them; `party=called` where the phone called us), the responses after the first provisional
// only with `send_connected_line`.
//
// In: with `trust_connected_line` and `trust_id_inbound`, the P-Asserted-Identity (else
// Remote-Party-ID) of the phone's re-INVITE or UPDATE, or of its 18x/2xx to our INVITE, naming a
// number becomes the channel's caller id and the connected line of the party bridged with it, when
// its number (or, the same number, its name) differs from the identity the phone gave last.
import type { CallerId, Channel } from '../../core/channels/channel.ts';
import { bridgePeerOf } from '../../core/bridges/bridge-peers.ts';
import type { SipRequest, SipResponse } from '../../sip/message.ts';
import { glareRetryDelayMs } from '../../sip/sdp/offer-exchange.ts';
import { parseNameAddr } from '../../sip/uri.ts';
import { outboundIdentity, type OutboundIdentityOptions } from './caller-identity.ts';
import type { ConnectedLineOptions } from './call-types.ts';

/** Longest display name or number taken from a phone's identity header. */
const MAX_ID_PART = 80;
/** Longest identity header read: a list longer than this is cut before it is parsed. */
const MAX_HEADER_READ = 1024;

/** What the connected line reads of its call at each step (SipCall is one). */
interface ConnectedLineCall {
  readonly channel: Channel;
  readonly ended: boolean;
  /** The phone called us (we are the UAS): RPID says `party=called`, and rpid_immediate applies. */
  readonly inbound: boolean;
  /** The dialog is confirmed (inbound: our 2xx was ACKed): an update may go in it. */
  readonly confirmed: boolean;
  /** Our host for the identity URIs (from_domain wins in the builder). */
  host(): string;
}

/** How the connected line goes out: through the call's requests and responses. */
interface ConnectedLineSending {
  /** The far end's Allow lists UPDATE (call-session.ts). */
  peerAllowsUpdate(): boolean;
  /** A re-INVITE with our SDP (its identity headers come from dialogHeaders); false when none could go. */
  reinvite(): boolean;
  /** An UPDATE without SDP in the dialog; false when it could not go. */
  update(onFinal: (response: SipResponse) => void, onNoResponse: () => void): boolean;
  /** A 180 or 183 to the unanswered INVITE (rpid_immediate). */
  provisional(status: 180 | 183): void;
}

export class ConnectedLine {
  /** An UPDATE of ours waits for its final answer. */
  #inFlight = false;
  /** A newer identity came meanwhile: it goes once the UPDATE in flight is answered. */
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  /** Indicated before the dialog was confirmed: it goes once it is (pjsip delays a refresh until then). */
  #pending = false;
  /** The identity the phone gave last (Asterisk's session id); unset inbound until first needed. */
  #farEndId: CallerId | undefined;

  constructor(
    private readonly options: Readonly<ConnectedLineOptions>,
    private readonly identity: OutboundIdentityOptions | undefined,
    private readonly call: ConnectedLineCall,
    private readonly sending: ConnectedLineSending,
  ) {
    // A call we place starts from the endpoint's own caller id (the session id chan_pjsip starts with).
    if (!call.inbound) this.#farEndId = { name: identity?.self?.name ?? '', number: identity?.self?.number ?? '' };
  }

  /** P-Asserted-Identity / Remote-Party-ID naming the connected line, for our INVITEs and UPDATEs in the dialog. */
  requestHeaders(): Array<[string, string]> {
    return this.#identityHeaders();
  }

  /**
   * The identity headers of a response to the phone's INVITE; `early`: a provisional response went
   * already (pjsip's EARLY state), after which they need `send_connected_line`.
   */
  responseHeaders(early: boolean): Array<[string, string]> {
    if (early && this.options.sendConnectedLine === false) return [];
    return this.#identityHeaders();
  }

  /** The core indicated the channel's connected line (the driver's connectedLine hook). */
  indicated(): void {
    const { call } = this;
    if (call.ended || !this.#allowed()) return;
    const channel = call.channel;
    if (channel.state === 'Up' || !call.inbound) {
      if (call.confirmed) this.#send();
      else this.#pending = true;
      return;
    }
    if (this.options.rpidImmediate !== true) return;
    if (channel.state === 'Ring') this.sending.provisional(this.options.inbandProgress === true ? 183 : 180);
    else if (channel.state === 'Ringing') this.sending.provisional(183);
  }

  /** The dialog is confirmed (the ACK of our 2xx came, or the 2xx to our INVITE): an update indicated meanwhile goes now. */
  dialogConfirmed(): void {
    if (!this.#pending) return;
    this.#pending = false;
    if (!this.call.ended && this.#allowed()) this.#send();
  }

  /** A re-INVITE or UPDATE from the phone, or a 18x/2xx to our INVITE: its asserted identity, if trusted and new. */
  received(message: SipRequest | SipResponse): void {
    if (this.options.trustConnectedLine === false || this.options.trustIdInbound !== true || this.call.ended) return;
    const id = assertedId(message.get('p-asserted-identity')) ?? assertedId(message.get('remote-party-id'));
    if (!id || !this.#isNew(id)) return;
    this.#farEndId = id;
    const channel = this.call.channel;
    if (channel.hangingUp) return;
    // The phone's channel now has that caller id; the party bridged with it is connected to it.
    if (channel.caller.name !== id.name || channel.caller.number !== id.number) channel.setCaller(id);
    const peer = bridgePeerOf(channel);
    if (!peer || peer.hangingUp) return;
    if (peer.connected.name !== id.name || peer.connected.number !== id.number) peer.setConnected(id);
    peer.indicateConnectedLine('answer');
  }

  /** The call ended: a retry waiting is not sent. */
  close(): void {
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  /** chan_pjsip's is_colp_update_allowed: enabled, a header to carry it, a number to name (every id is presented here). */
  #allowed(): boolean {
    if (this.options.sendConnectedLine === false) return false;
    if (this.options.sendPai !== true && this.options.sendRpid !== true) return false;
    return this.call.channel.connected.number !== '';
  }

  #send(): void {
    const byUpdate = this.options.connectedLineMethod === 'update' || this.sending.peerAllowsUpdate();
    // A re-INVITE waits in call-offers.ts for an open offer, and a newer one replaces it there.
    if (!byUpdate) return void this.sending.reinvite();
    if (this.#inFlight || this.#retry) {
      this.#again = true;
      return;
    }
    const sent = this.sending.update(
      (response) => this.#answered(response.status),
      () => this.#answered(408),
    );
    this.#inFlight = sent;
  }

  #answered(status: number): void {
    this.#inFlight = false;
    if (this.call.ended) return;
    if (status === 491) {
      // Glare (RFC 3261 §14.1): the newest identity goes after the wait the Call-ID's owner keeps.
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#again = false;
        if (!this.call.ended && this.#allowed()) this.#send();
      }, glareRetryDelayMs(!this.call.inbound));
      this.#retry.unref();
      return;
    }
    if (!this.#again) return;
    this.#again = false;
    if (this.#allowed()) this.#send();
  }

  /** res_pjsip_caller_id's rule: a number is needed; a new number, or the same number with a new name. */
  #isNew(id: CallerId): boolean {
    if (!id.number) return false;
    const known = (this.#farEndId ??= { ...this.call.channel.caller });
    if (!known.number || known.number !== id.number) return true;
    if (!id.name) return false;
    return !known.name || known.name !== id.name;
  }

  #identityHeaders(): Array<[string, string]> {
    const identity = this.identity;
    const connected = this.call.channel?.connected;
    if (!identity || !connected?.number || (!identity.sendPai && !identity.sendRpid)) return [];
    const { headers } = outboundIdentity(identity, connected, this.call.host(), '');
    const wanted: Array<[string, string]> = [];
    for (const [name, value] of headers) {
      if (name === 'P-Asserted-Identity') wanted.push([name, value]);
      // The party is the side we are on in this call: `called` when the phone called us.
      else if (name === 'Remote-Party-ID') wanted.push([name, this.call.inbound ? value.replace(/;party=calling/i, ';party=called') : value]);
    }
    return wanted;
  }
}

/** The first identity of a P-Asserted-Identity or Remote-Party-ID value, with a number to name. */
function assertedId(value: string | undefined): CallerId | undefined {
  if (value === undefined) return undefined;
  const text = value.length > MAX_HEADER_READ ? value.slice(0, MAX_HEADER_READ) : value;
  // A list may carry a sip: and a tel: identity: the first one counts.
  const first = text.split(/,(?=\s*(?:"|<|sip:|sips:|tel:))/)[0] ?? '';
  const parsed = parseNameAddr(first);
  if (!parsed) return undefined;
  const uri = parsed.uri;
  const number = uri.kind === 'sip' ? (uri.user ?? '') : uri.scheme === 'tel' ? (uri.opaque.split(';')[0] ?? '') : '';
  const id = { name: cleanPart(parsed.displayName ?? ''), number: cleanPart(number) };
  return id.number ? id : undefined;
}

/** A name or number as it may go into a channel: no control characters, bounded. */
function cleanPart(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f\x7f]/g, '').slice(0, MAX_ID_PART);
}
