// Who may send us REGISTER, INVITE and MESSAGE: the request's endpoint is identified, its own ACL
// checked (endpoint-acl.ts: a refused request goes on as from no endpoint), then digest
// authentication is asked of endpoints that name an auth (res_pjsip's inbound authentication). A
// request in a dialog has its dialog's endpoint's ACL checked, and a refusal logged, only.
import { DigestAuthenticator, type DigestAlgorithm } from '../../sip/auth/digest.ts';
import type { SipRequest } from '../../sip/message.ts';
import { unforceRport, type Source } from '../../sip/transport.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { PjsipEndpoint } from './config/index.ts';
import type { EndpointIdentifier } from './identify.ts';
import type { EndpointAcls } from './endpoint-acl.ts';
import type { PjsipRuntime } from './runtime.ts';
import { LogThrottle } from '../../util/log-throttle.ts';
import { SipAuthFailures, type SipAuthFailureLimits } from './auth-failures.ts';

/** Used until configure() gives the settings' (sip.failed_auth). */
const DEFAULT_LIMITS: SipAuthFailureLimits = { maxPerSource: 10, maxPerEndpoint: 30, windowSeconds: 60, blockSeconds: 60, tracked: 10_000 };

export class InboundAuthenticator {
  readonly #runtime: PjsipRuntime;
  readonly #identifier: EndpointIdentifier;
  /** The endpoints' own ACLs of the running configuration (rebuilt with it). */
  readonly #acls: () => EndpointAcls | undefined;
  #digest = new DigestAuthenticator({ realm: 'asterisk' });
  #failures = new SipAuthFailures(DEFAULT_LIMITS);
  /** One line per interval at most: a guesser makes hundreds of failures a second. */
  readonly #failureLog = new LogThrottle(10_000);
  readonly #blockLog = { source: new LogThrottle(10_000), endpoint: new LogThrottle(10_000) };

  constructor(runtime: PjsipRuntime, identifier: EndpointIdentifier, acls: () => EndpointAcls | undefined = () => undefined) {
    this.#runtime = runtime;
    this.#identifier = identifier;
    this.#acls = acls;
  }

  /** Guesses failed and refused since start, and blocks now, for GET /metrics. */
  get failures(): SipAuthFailures {
    return this.#failures;
  }

  /** The realm (global default_realm), the algorithms offered (sip.auth_algorithms) and the failed-guess budget, at start. */
  configure(realm: string, algorithms: readonly string[], limits: SipAuthFailureLimits = DEFAULT_LIMITS): void {
    this.#failures = new SipAuthFailures(limits);
    // What is offered is sip.auth_algorithms (MD5 alone by default): many phones answer only the first
    // challenge, or give up on an algorithm they do not know (baresip 1.0 on SHA-256).
    this.#digest = new DigestAuthenticator({ realm, algorithms: algorithms.filter((name): name is DigestAlgorithm => name === 'MD5' || name === 'SHA-256') });
  }

  /** The endpoint the request is from once identified and authenticated; undefined when it has been answered. */
  admit(request: SipRequest, tx: ServerTransaction): PjsipEndpoint | undefined {
    const endpoint = this.#identify(request, tx);
    // force_rport=no: responses (the challenge included) go to the port the Via names.
    if (endpoint && !endpoint.forceRport) unforceRport(request);
    return this.#authenticate(request, tx, endpoint) ? endpoint : undefined;
  }

  /**
   * Whether an OPTIONS outside a dialog may be answered: as Asterisk, an endpoint that names an
   * auth is asked for credentials unless it has `allow_unauthenticated_options`; a sender no
   * endpoint matches is answered without (Patchbay answers everyone's pings). False when it has
   * been answered (401, 403).
   */
  admitOptions(request: SipRequest, tx: ServerTransaction): boolean {
    // Nothing to identify when no endpoint would be challenged and none has an ACL (the common ping
    // path stays a lookup-free 200).
    const acls = this.#acls();
    if (!this.#anyOptionsChallenged() && !acls) return true;
    const endpoint = this.#identifier.identify(request, tx.source);
    // Refused by its endpoint's ACL: challenged as Asterisk's artificial endpoint is (never answered 200).
    if (endpoint && acls?.refuses(endpoint, request, tx.source)) return this.#authenticate(request, tx, undefined);
    if (!endpoint || endpoint.auth.length === 0 || endpoint.allowUnauthenticatedOptions) return true;
    if (!endpoint.forceRport) unforceRport(request);
    return this.#authenticate(request, tx, endpoint);
  }

  /**
   * Whether the own ACL of the endpoint a dialog belongs to (a call's, a subscription's) refuses a
   * request in that dialog; logged as any refusal. pjsip_distributor.c checks every request with an
   * endpoint, the dialog's included, and swaps in its artificial endpoint, but pjsip's dialog layer
   * takes an in-dialog request before Asterisk's authenticator could challenge it: the request is
   * answered as usual, only the NAT handling is the artificial endpoint's (force_rport, no
   * rewrite_contact), which the caller applies when this is true.
   */
  refusedInDialog(endpointId: string, request: SipRequest, source: Source): boolean {
    return this.#acls()?.refusesFor(endpointId, request, source) === true;
  }

  /** The request's endpoint, or undefined when none matches or its own ACL refuses the request. */
  #identify(request: SipRequest, tx: ServerTransaction): PjsipEndpoint | undefined {
    const endpoint = this.#identifier.identify(request, tx.source);
    return endpoint && this.#acls()?.refuses(endpoint, request, tx.source) ? undefined : endpoint;
  }

  #optionsChallengedIn: { readonly config: unknown; readonly any: boolean } | undefined;

  /** Whether some endpoint has an auth and not allow_unauthenticated_options (kept per configuration). */
  #anyOptionsChallenged(): boolean {
    const config = this.#runtime.config;
    if (this.#optionsChallengedIn?.config !== config) {
      let any = false;
      for (const endpoint of config.endpoints.values()) if (endpoint.auth.length > 0 && !endpoint.allowUnauthenticatedOptions) any = true;
      this.#optionsChallengedIn = { config, any };
    }
    return this.#optionsChallengedIn.any;
  }

  /**
   * Digest authentication for endpoints that name an auth. Returns true when the request may go
   * on; otherwise it has been answered (401 with a challenge, or 403).
   */
  #authenticate(request: SipRequest, tx: ServerTransaction, endpoint: PjsipEndpoint | undefined): endpoint is PjsipEndpoint {
    if (endpoint && endpoint.auth.length === 0) return true;
    const source = tx.source.address;
    if (this.#failures.sourceBlocked(source)) {
      this.#failures.refusedUnchecked();
      tx.reply(403, 'Forbidden');
      return false;
    }
    const auths = endpoint ? endpoint.auth.map((id) => this.#runtime.config.auths.get(id)).filter((auth) => auth !== undefined) : [];
    // An unknown sender's credentials are checked against none at all: the nonce decides the answer
    // exactly as for a known endpoint (401 for a nonce that is not ours or has expired, 403 for a
    // guess), so the answers do not tell which names exist. Past an endpoint's budget the lookup finds
    // nothing either: the guess fails without being checked.
    const blocked = endpoint !== undefined && this.#failures.endpointBlocked(endpoint.id, source);
    const result = this.#digest.verify({
      method: request.method,
      authorization: request.authorization(),
      lookup: (username) => {
        const auth = blocked ? undefined : auths.find((candidate) => candidate.username === username);
        if (!auth) return undefined;
        // Its nonce_lifetime: a nonce older than that is stale (401 with stale=true), as Asterisk checks it per auth.
        if (auth.authType === 'md5' && auth.md5Cred) return { md5Cred: auth.md5Cred, nonceLifetime: auth.nonceLifetime };
        return { password: auth.password ?? '', nonceLifetime: auth.nonceLifetime };
      },
    });
    if (result.ok) {
      // Only a known endpoint's credentials can pass (an unknown sender's are checked against none).
      if (endpoint) this.#failures.succeeded(endpoint.id, source);
      return endpoint !== undefined;
    }
    if ((result.reason === 'missing' || result.reason === 'stale' || result.reason === 'bad-nonce')) {
      const md5Only = auths.some((auth) => auth.authType === 'md5');
      const challenges = this.#digest.challenge({ stale: result.reason === 'stale', ...(md5Only ? { algorithms: ['MD5'] as const } : {}) });
      tx.reply(401, undefined, challenges.map((value) => ['WWW-Authenticate', value] as [string, string]));
      return false;
    }
    if (blocked) this.#failures.refusedUnchecked();
    else this.#recordFailure(source, tx.source.port, endpoint?.id, result.reason);
    tx.reply(403, 'Forbidden');
    return false;
  }

  /** Counts a failed guess; the log says so at most once per interval, and every block that starts. */
  #recordFailure(address: string, port: number, endpoint: string | undefined, reason: string): void {
    const blocks = this.#failures.failed(address, endpoint);
    const log = this.#runtime.log;
    this.#failureLog.run((suppressed) =>
      log?.info({ endpoint, reason, source: `${address}:${port}`, ...(suppressed > 0 ? { suppressed } : {}) }, 'SIP authentication failed'),
    );
    for (const block of blocks) {
      this.#blockLog[block.kind].run((suppressed) =>
        log?.warn(
          { [block.kind]: block.key, seconds: block.seconds, ...(suppressed > 0 ? { suppressed } : {}) },
          `SIP authentication: too many failures for ${block.kind} ${block.key}; refused unchecked for ${block.seconds} s`,
        ),
      );
    }
  }
}
