// The targets a redirected INVITE may go to, as pjsip keeps its dialog's target set: the first
// Request-URI, then the Contacts of each 3xx, each URI once (so a redirect loop ends when no new
// URI is left), ordered by q (highest first; equal q in the order they came), the next target the
// first one not tried yet. pjsip bounds neither the Contacts nor the redirects; a far end's 3xx
// is hostile, so both are bounded here with the figures Asterisk 22's own redirect code
// (res_pjsip/redirect.c, for MESSAGE) uses: 20 Contacts of a response, 5 redirects of a call.
import type { SipResponse } from '../../sip/message.ts';
import { formatUri, type SipUri, type Uri } from '../../sip/uri.ts';

/** Contacts of one 3xx taken, in header order; the rest are ignored. */
export const MAX_REDIRECT_CONTACTS = 20;
/** Redirects one INVITE follows (redirect_method=uri_pjsip); the next 3xx ends the call. */
export const MAX_REDIRECT_HOPS = 5;

interface Target {
  readonly uri: SipUri;
  /** The URI as compared (pjsip_uri_cmp): written without its headers, host lower-cased by the parser. */
  readonly key: string;
  /** q × 1000; a Contact without q counts as 1.0, as pjsip has it. */
  readonly q1000: number;
  tried: boolean;
}

const keyOf = (uri: SipUri): string => formatUri({ ...uri, headers: new Map() });

/** Extension length Asterisk copies the user part into (AST_MAX_EXTENSION, its NUL aside). */
const MAX_FORWARD_USER = 79;

/**
 * The call forward a redirect leaves on the channel (res_pjsip_session's on_redirected): the
 * Contact's user with redirect_method=user, `PJSIP/<endpoint>/<Contact URI>` with uri_core.
 */
export function forwardOf(target: SipUri, method: 'user' | 'uri_core' | 'uri_pjsip', endpointId: string): string {
  if (method === 'user') return (target.user ?? '').slice(0, MAX_FORWARD_USER);
  return `PJSIP/${endpointId}/${keyOf(target)}`;
}

export class RedirectTargets {
  readonly #targets: Target[] = [];
  #hops = 0;

  /** `first`: the Request-URI of our first INVITE, tried already. */
  constructor(first: Uri) {
    if (first.kind === 'sip') this.#targets.push({ uri: first, key: keyOf(first), q1000: 1000, tried: true });
  }

  /** Redirects followed so far. */
  get hops(): number {
    return this.#hops;
  }

  /**
   * The SIP and SIPS Contacts of a 3xx (the first MAX_REDIRECT_CONTACTS of them) join the set, a
   * URI already in it (tried or not) left out; other schemes are unusable, as pjsip finds them.
   */
  add(response: SipResponse): void {
    const contacts = response.contacts();
    if (contacts === 'wildcard') return;
    for (const contact of contacts.slice(0, MAX_REDIRECT_CONTACTS)) {
      if (contact.uri.kind !== 'sip') continue;
      const uri = contact.uri;
      const key = keyOf(uri);
      if (this.#targets.some((target) => target.key === key)) continue;
      const q1000 = contact.q === undefined || contact.q <= 0 ? 1000 : Math.round(contact.q * 1000);
      // Before the first target of a lower q: equal q keeps the order of arrival.
      const at = this.#targets.findIndex((target) => target.q1000 < q1000);
      const entry: Target = { uri, key, q1000, tried: false };
      if (at < 0) this.#targets.push(entry);
      else this.#targets.splice(at, 0, entry);
    }
  }

  /** The best target not tried yet (marked tried), if any. */
  next(): SipUri | undefined {
    const target = this.#targets.find((candidate) => !candidate.tried);
    if (!target) return undefined;
    target.tried = true;
    return target.uri;
  }

  /** Takes the next target for a redirect to be followed; undefined when none is left or the hops are spent. */
  follow(): SipUri | undefined {
    if (this.#hops >= MAX_REDIRECT_HOPS) return undefined;
    const target = this.next();
    if (target) this.#hops++;
    return target;
  }
}

/**
 * What 3xx responses do to one outbound call, as res_pjsip_session's on_redirected decides with
 * pjsip offering it the best target not tried: redirect_method=uri_pjsip follows it (`resend`: the
 * INVITE again to that target, false when it cannot go there: the next one is taken); otherwise
 * the call ends with the channel forwarded to the target's user, or PJSIP/<endpoint>/<URI>.
 */
export class InviteRedirects {
  readonly #targets: RedirectTargets;

  constructor(
    first: Uri,
    private readonly method: 'user' | 'uri_core' | 'uri_pjsip',
    private readonly endpointId: string,
  ) {
    this.#targets = new RedirectTargets(first);
  }

  /** A 3xx: true when followed, else the call forward the channel is left ('' when there is none). */
  redirected(response: SipResponse, resend: (target: SipUri) => boolean): true | string {
    this.#targets.add(response);
    if (this.method === 'uri_pjsip') return this.retry(resend) || '';
    const target = this.#targets.next();
    return target ? forwardOf(target, this.method, this.endpointId) : '';
  }

  /** The next target after a refusal (uri_pjsip only); false when none is left or the redirects are spent. */
  retry(resend: (target: SipUri) => boolean): boolean {
    if (this.method !== 'uri_pjsip') return false;
    for (let target = this.#targets.follow(); target; target = this.#targets.follow()) if (resend(target)) return true;
    return false;
  }
}
