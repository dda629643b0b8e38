// Answering the 401/407 challenges to a request we sent (RFC 3261 §22.2, §22.3), for requests that
// are retried once per challenge: an outbound INVITE, and any other request sent on behalf of an
// endpoint with `outbound_auth`. The retry is a copy of the request with a new CSeq (the same Call-ID
// and From tag) and one Authorization (401) or Proxy-Authorization (407) per realm challenged.
//
// Giving up, as pjsip's client authentication does for Asterisk: a realm that challenges again after
// we answered it, without `stale=true`, rejected our credentials (one failed retry per realm); a
// realm none of the credentials fits cannot be answered; and a far end that keeps answering with
// stale challenges is stopped after MAX_CHALLENGES retries in all (Asterisk's MAX_RX_CHALLENGES).
import { SipRequest, type SipResponse } from '../message.ts';
import { formatUri } from '../uri.ts';
import { answerChallenge, chooseChallenge, parseDigestChallenge, type DigestChallenge, type DigestCredentials } from './digest-client.ts';

/** Retries of one request, whatever the challenges, at most (Asterisk's MAX_RX_CHALLENGES). */
export const MAX_CHALLENGES = 10;
/** Realms answered in one retry, at most: a response listing more is a far end to distrust. */
const MAX_REALMS = 4;
/** Headers of the request that are not carried into its retry: the transaction and the credentials are new. */
const NOT_COPIED = new Set(['via', 'v', 'cseq', 'authorization', 'proxy-authorization']);

export type ChallengeOutcome =
  | { readonly ok: true; readonly request: SipRequest }
  | { readonly ok: false; readonly reason: 'no-credentials' | 'rejected' | 'too-many' | 'not-a-challenge' };

/** A realm answered: a second challenge from it refuses our credentials unless stale. */
interface RealmAnswer {
  readonly header: 'Authorization' | 'Proxy-Authorization';
  readonly challenge: DigestChallenge;
  readonly credentials: DigestCredentials;
  /** Uses of the challenge's nonce so far. */
  nc: number;
}

export class RequestChallenges {
  /**
   * Every realm answered so far, by realm. Each retry carries credentials for all of them (RFC 3261
   * §22.3: a proxy's, answered first, must still be there when the callee challenges next).
   */
  readonly #answers = new Map<string, RealmAnswer>();
  #retries = 0;

  constructor(private readonly credentials: readonly DigestCredentials[]) {}

  /** How many times the request has been retried with credentials. */
  get retries(): number {
    return this.#retries;
  }

  /**
   * The retry of `sent` that answers `challenge` (a 401 or 407 to it), or why there is none. The
   * retry has CSeq + 1 (or `seq`: a dialog's next, when other requests went in it meanwhile) and the
   * same Call-ID, tags, Route and body; the caller sends it in a new client transaction.
   */
  retry(sent: SipRequest, challenge: SipResponse, seq?: number): ChallengeOutcome {
    const proxy = challenge.status === 407;
    if (challenge.status !== 401 && !proxy) return { ok: false, reason: 'not-a-challenge' };
    if (this.#retries >= MAX_CHALLENGES) return { ok: false, reason: 'too-many' };
    const values = proxy ? challenge.proxyAuthenticate() : challenge.wwwAuthenticate();
    // One challenge per realm: the first of each realm that our credentials can answer, in the
    // order the far end listed them (its preference, e.g. SHA-256 before MD5).
    const byRealm = new Map<string, string[]>();
    for (const value of values.slice(0, 16)) {
      const parsed = parseDigestChallenge(value);
      if (!parsed) continue;
      const list = byRealm.get(parsed.realm) ?? [];
      list.push(value);
      byRealm.set(parsed.realm, list);
    }
    if (byRealm.size === 0 || byRealm.size > MAX_REALMS) return { ok: false, reason: 'no-credentials' };
    for (const [realm, realmValues] of byRealm) {
      const chosen = chooseChallenge(realmValues, this.credentials);
      if (!chosen) return { ok: false, reason: 'no-credentials' };
      // Challenged again after we answered: our credentials were refused, unless the nonce only aged.
      if (this.#answers.has(realm) && !chosen.challenge.stale) return { ok: false, reason: 'rejected' };
      this.#answers.set(realm, { header: proxy ? 'Proxy-Authorization' : 'Authorization', ...chosen, nc: 0 });
    }
    const next = seq ?? (sent.cseq()?.seq ?? 1) + 1;
    if (next > 2 ** 31 - 1) return { ok: false, reason: 'too-many' };
    const retry = new SipRequest(sent.method, sent.uri);
    retry.uriText = sent.uriText;
    for (const header of sent.headers) {
      if (NOT_COPIED.has(header.name.toLowerCase())) continue;
      retry.add(header.name, header.value);
      // CSeq goes where it was, right after Call-ID, for readability of traces.
      if (header.name.toLowerCase() === 'call-id' || header.name.toLowerCase() === 'i') retry.add('CSeq', `${next} ${sent.method}`);
    }
    if (!retry.has('cseq')) retry.add('CSeq', `${next} ${sent.method}`);
    const uri = sent.uriText || formatUri(sent.uri);
    for (const answer of this.#answers.values()) {
      answer.nc++;
      retry.add(answer.header, answerChallenge(answer.challenge, answer.credentials, sent.method, uri, answer.nc));
    }
    retry.body = sent.body;
    this.#retries++;
    return { ok: true, request: retry };
  }
}
