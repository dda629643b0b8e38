// ICE-lite (RFC 8445 §2.5) for one media socket. Patchbay is a server with an address browsers can
// reach (its host candidate, or external_media_address), so it need not gather server-reflexive or
// relayed candidates nor run checks of its own: the browser (a full agent, controlling) checks the
// pair and nominates it; we answer its STUN binding requests and send media where the nominated
// check came from. Each request must carry our ufrag in USERNAME and a MESSAGE-INTEGRITY keyed with
// our ice-pwd; answers carry XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and FINGERPRINT (RFC 5389).
// Consent freshness (RFC 7675): the browser keeps checking every few seconds; when no valid check
// has arrived for CONSENT_TIMEOUT_MS the far end has withdrawn consent and we stop sending.
// The STUN codec is werift-ice's (maintained, tested against browsers); the rules are ours.
import { randomBytes } from 'node:crypto';
import { classes, Message, methods, parseMessage } from 'werift-ice';

/** RFC 7675 §5.1: consent expires 30 s after the last successful check. */
export const CONSENT_TIMEOUT_MS = 30_000;

/** ice-ufrag and ice-pwd from RFC 8839's character set (`ice-char`), long enough to be unguessable. */
export function iceCredentials(): { ufrag: string; pwd: string } {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const pick = (length: number) => [...randomBytes(length)].map((byte) => chars[byte & 63]).join('');
  return { ufrag: pick(8), pwd: pick(24) };
}

/** A STUN message's first byte is 0..3 (RFC 7983 §7). */
export function looksLikeStun(packet: Buffer): boolean {
  return packet.length >= 20 && packet[0]! <= 3 && packet.readUInt32BE(4) === 0x2112a442;
}

export interface SelectedPair {
  readonly address: string;
  readonly port: number;
}

/** Our ice-ufrag and ice-pwd. */
export interface IceCredentials {
  readonly ufrag: string;
  readonly pwd: string;
}

export class IceLiteResponder {
  #remoteUfrag: string | undefined;
  #selected: SelectedPair | undefined;
  #lastConsentAt = 0;
  /** Checks answered and refused (statistics, tests). */
  answered = 0;
  refused = 0;

  /**
   * `local`: credentials made elsewhere (a media worker answers with those the main thread put in the
   * SDP); new ones by default. `consentTimeoutMs`: RFC 7675's 30 s unless a test needs it shorter.
   */
  constructor(
    readonly local: IceCredentials = iceCredentials(),
    private readonly consentTimeoutMs = CONSENT_TIMEOUT_MS,
  ) {}

  /** The far end's ice-ufrag from its SDP: the second half of USERNAME (a renewed one restarts ICE). */
  setRemote(ufrag: string | undefined): void {
    this.#remoteUfrag = ufrag;
  }

  /** Where media goes: the nominated pair's remote address, else the last one that checked. */
  get selected(): SelectedPair | undefined {
    return this.#selected;
  }

  /** Whether the far end's consent is fresh (a valid check within CONSENT_TIMEOUT_MS). */
  consented(now = performance.now()): boolean {
    return this.#selected !== undefined && now - this.#lastConsentAt <= this.consentTimeoutMs;
  }

  /**
   * A STUN packet from `address`:`port`. Returns the response to send back to it, or undefined
   * for anything that is not a valid binding request for us (it is dropped, never answered: an
   * answer to a wrong password would be an oracle).
   */
  handle(packet: Buffer, address: string, port: number, now = performance.now()): Buffer | undefined {
    let request: Message | undefined;
    try {
      request = parseMessage(packet, Buffer.from(this.local.pwd, 'utf8'));
    } catch {
      request = undefined;
    }
    if (!request || request.messageMethod !== methods.BINDING || request.messageClass !== classes.REQUEST) return this.#refuse();
    const username = request.getAttributeValue('USERNAME');
    if (typeof username !== 'string') return this.#refuse();
    const [ours, theirs] = username.split(':');
    if (ours !== this.local.ufrag || (this.#remoteUfrag !== undefined && theirs !== this.#remoteUfrag)) return this.#refuse();
    // A browser is the controlling agent: its nomination (USE-CANDIDATE) picks the pair; before one, the latest check.
    const nominated = request.attributesKeys.includes('USE-CANDIDATE');
    if (nominated || this.#selected === undefined || !this.consented(now)) this.#selected = { address, port };
    if (this.#selected.address === address && this.#selected.port === port) this.#lastConsentAt = now;
    this.answered += 1;
    const response = new Message(methods.BINDING, classes.RESPONSE, request.transactionId);
    response.setAttribute('XOR-MAPPED-ADDRESS', [address, port]);
    response.addMessageIntegrity(Buffer.from(this.local.pwd, 'utf8'));
    response.addFingerprint();
    return response.bytes;
  }

  #refuse(): undefined {
    this.refused += 1;
    return undefined;
  }
}
