// Who may send us REGISTER, INVITE and MESSAGE: the request's endpoint is identified, then digest
// authentication is asked of endpoints that name an auth (res_pjsip's inbound authentication).
import { DigestAuthenticator, type DigestAlgorithm } from '../../sip/auth/digest.ts';
import type { SipRequest } from '../../sip/message.ts';
import { unforceRport } from '../../sip/transport.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { PjsipEndpoint } from './config/index.ts';
import type { EndpointIdentifier } from './identify.ts';
import type { PjsipRuntime } from './runtime.ts';

export class InboundAuthenticator {
  readonly #runtime: PjsipRuntime;
  readonly #identifier: EndpointIdentifier;
  #digest = new DigestAuthenticator({ realm: 'asterisk' });

  constructor(runtime: PjsipRuntime, identifier: EndpointIdentifier) {
    this.#runtime = runtime;
    this.#identifier = identifier;
  }

  /** The realm (global default_realm) and the algorithms offered (sip.auth_algorithms), at start. */
  configure(realm: string, algorithms: readonly string[]): void {
    // What is offered is sip.auth_algorithms (MD5 alone by default): many phones answer only the first
    // challenge, or give up on an algorithm they do not know (baresip 1.0 on SHA-256).
    this.#digest = new DigestAuthenticator({ realm, algorithms: algorithms.filter((name): name is DigestAlgorithm => name === 'MD5' || name === 'SHA-256') });
  }

  /** The endpoint the request is from once identified and authenticated; undefined when it has been answered. */
  admit(request: SipRequest, tx: ServerTransaction): PjsipEndpoint | undefined {
    const endpoint = this.#identifier.identify(request, tx.source);
    // force_rport=no: responses (the challenge included) go to the port the Via names.
    if (endpoint && !endpoint.forceRport) unforceRport(request);
    return this.#authenticate(request, tx, endpoint) ? endpoint : undefined;
  }

  /**
   * Digest authentication for endpoints that name an auth. Returns true when the request may go
   * on; otherwise it has been answered (401 with a challenge, or 403).
   */
  #authenticate(request: SipRequest, tx: ServerTransaction, endpoint: PjsipEndpoint | undefined): endpoint is PjsipEndpoint {
    if (!endpoint) {
      // Unknown senders get a challenge first, as known ones do, so names cannot be probed.
      if (request.authorization().length === 0) tx.reply(401, undefined, this.#digest.challenge().map((value) => ['WWW-Authenticate', value] as [string, string]));
      else tx.reply(403, 'Forbidden');
      return false;
    }
    if (endpoint.auth.length === 0) return true;
    const auths = endpoint.auth.map((id) => this.#runtime.config.auths.get(id)).filter((auth) => auth !== undefined);
    const result = this.#digest.verify({
      method: request.method,
      authorization: request.authorization(),
      lookup: (username) => {
        const auth = auths.find((candidate) => candidate.username === username);
        if (!auth) return undefined;
        if (auth.authType === 'md5' && auth.md5Cred) return { md5Cred: auth.md5Cred };
        return { password: auth.password ?? '' };
      },
    });
    if (result.ok) return true;
    if (result.reason === 'missing' || result.reason === 'stale' || result.reason === 'bad-nonce') {
      const md5Only = auths.some((auth) => auth.authType === 'md5');
      const challenges = this.#digest.challenge({ stale: result.reason === 'stale', ...(md5Only ? { algorithms: ['MD5'] as const } : {}) });
      tx.reply(401, undefined, challenges.map((value) => ['WWW-Authenticate', value] as [string, string]));
      return false;
    }
    this.#runtime.log?.info({ endpoint: endpoint.id, reason: result.reason, source: `${tx.source.address}:${tx.source.port}` }, 'SIP authentication failed');
    tx.reply(403, 'Forbidden');
    return false;
  }
}
