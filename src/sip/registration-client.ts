// Outbound registration (RFC 3261 §10.2), as Asterisk's res_pjsip_outbound_registration does it:
// REGISTER to a provider's `server_uri` for the address-of-record `client_uri`, answering digest
// challenges (401/407, MD5 or SHA-256), refreshed before the granted expiry, retried after
// failures within `max_retries`, and removed (Expires: 0) when stopped.
//
// Failure handling, following Asterisk's rules:
// - 401/407 after credentials were sent (a nonce not marked stale): with auth_rejection_permanent
//   the registration is Rejected and stops; otherwise it is retried like a temporary failure.
// - 403: retried after forbidden_retry_interval when it is set, else Rejected.
// - 408, 480, 500, 503, 504, no answer, a transport error: temporary, retried after retry_interval.
// - 423: once more with the registrar's Min-Expires.
// - any other final failure: retried after fatal_retry_interval when set, else Rejected.
// Every retry counts; past max_retries the registration is Rejected.
import type { Logger } from 'pino';
import { answerChallenge, chooseChallenge, type DigestChallenge, type DigestCredentials } from './auth/digest-client.ts';
import { newCallId, newTag, SipRequest, type SipResponse } from './message.ts';
import type { TransactionLayer } from './transaction/index.ts';
import type { Destination } from './transport.ts';
import { formatUri, type SipUri } from './uri.ts';

export type RegistrationStatus = 'Unregistered' | 'Registered' | 'Rejected' | 'Stopped';

export interface RegistrationSettings {
  readonly id: string;
  /** Request-URI of the REGISTER (the provider). */
  readonly serverUri: SipUri;
  /** The address of record: From and To. */
  readonly clientUri: SipUri;
  /** Our Contact URI, without angle brackets. */
  readonly contact: string;
  /** Seconds asked for. */
  readonly expiration: number;
  readonly retryInterval: number;
  readonly forbiddenRetryInterval: number;
  readonly fatalRetryInterval: number;
  readonly maxRetries: number;
  readonly authRejectionPermanent: boolean;
  readonly credentials: readonly DigestCredentials[];
  /** Where REGISTERs go (the server URI's host, or the outbound proxy). */
  readonly destination: Destination;
  readonly userAgent: string;
  /** Header parameters written after our Contact's `>` (contact_header_params), without the leading `;`. */
  readonly contactHeaderParams?: string;
  /** Option tags of a Supported header (support_path: `path`). */
  readonly supported?: readonly string[];
  /** Milliseconds before the first REGISTER (max_random_initial_delay, drawn by the caller). */
  readonly initialDelayMs: number;
}

export interface RegistrationEnvironment {
  layer(): TransactionLayer | undefined;
  readonly log: Logger;
  onStatus?(id: string, status: RegistrationStatus, detail: { readonly code?: number; readonly expires?: number }): void;
}

const TEMPORARY = new Set([408, 480, 500, 503, 504]);
/** Longest wait for the final answer to the REGISTER that removes the binding at stop. */
const UNREGISTER_WAIT_MS = 2000;
/** Seconds at most that a registrar may make us wait or ask for (2^31 - 1 ms as a timer). */
const MAX_SECONDS = 2_000_000;

/** Stale challenges answered in a row within one attempt before it counts as a temporary failure. */
const MAX_STALE_ANSWERS = 3;

export class OutboundRegistration {
  readonly settings: RegistrationSettings;
  readonly #env: RegistrationEnvironment;
  readonly #callId = newCallId();
  readonly #fromTag = newTag();
  #cseq = 0;
  #status: RegistrationStatus = 'Unregistered';
  #timer: NodeJS.Timeout | undefined;
  #retries = 0;
  #expires: number;
  /** The challenge last answered, reused (next nonce count) so refreshes need no round trip. */
  #auth: { challenge: DigestChallenge; credentials: DigestCredentials; header: 'Authorization' | 'Proxy-Authorization'; nc: number } | undefined;
  #expiresAt = 0;
  #lastCode: number | undefined;
  /** The last answer as "code reason" (or why there was none), for the log lines of a failure. */
  #lastReason = '';
  #inFlight = false;
  /** Challenges marked stale answered in a row: a registrar that never stops calling them stale is given up on. */
  #staleAnswers = 0;

  constructor(settings: RegistrationSettings, env: RegistrationEnvironment) {
    this.settings = settings;
    this.#env = env;
    this.#expires = settings.expiration;
  }

  get status(): RegistrationStatus {
    return this.#status;
  }

  /** Epoch milliseconds when the current registration runs out (0 when not registered). */
  get expiresAt(): number {
    return this.#status === 'Registered' ? this.#expiresAt : 0;
  }

  /** The status code of the last final response (undefined before any, or after a timeout). */
  get lastCode(): number | undefined {
    return this.#lastCode;
  }

  start(): void {
    if (this.#status === 'Stopped') return;
    this.#arm(this.settings.initialDelayMs, () => this.#send(false));
  }

  /** Stops: the binding is removed at the registrar (Expires: 0) when registered; resolves when answered or after 2 s. */
  async stop(): Promise<void> {
    const wasRegistered = this.#status === 'Registered';
    this.#setStatus('Stopped', {});
    this.#disarm();
    if (!wasRegistered || !this.#env.layer()) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, UNREGISTER_WAIT_MS);
      timer.unref?.();
      this.#sendRegister(0, false, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #arm(delayMs: number, run: () => void): void {
    this.#disarm();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      run();
    }, Math.max(0, Math.min(delayMs, MAX_SECONDS * 1000)));
    this.#timer.unref?.();
  }

  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #setStatus(status: RegistrationStatus, detail: { code?: number; expires?: number }): void {
    const changed = status !== this.#status;
    this.#status = status;
    if (changed || status === 'Registered') this.#env.onStatus?.(this.settings.id, status, detail);
  }

  #send(authRetry: boolean): void {
    if (this.#status === 'Stopped' || this.#inFlight) return;
    this.#sendRegister(this.#expires, authRetry, undefined);
  }

  /**
   * One REGISTER (and, within it, the answer to one challenge). `done` is for the unregistering
   * REGISTER at stop: it is called at the final response and nothing else happens.
   */
  #sendRegister(expires: number, authRetry: boolean, done: (() => void) | undefined): void {
    const layer = this.#env.layer();
    if (!layer) {
      if (done) return done();
      return this.#temporaryFailure(undefined);
    }
    const { settings } = this;
    const aor = formatUri(settings.clientUri);
    const requestUri = formatUri(settings.serverUri);
    this.#cseq = this.#cseq >= 2 ** 31 - 2 ? 1 : this.#cseq + 1;
    const request = new SipRequest('REGISTER', settings.serverUri, [
      ['Max-Forwards', '70'],
      ['From', `<${aor}>;tag=${this.#fromTag}`],
      ['To', `<${aor}>`],
      ['Call-ID', this.#callId],
      ['CSeq', `${this.#cseq} REGISTER`],
      ['Contact', `<${settings.contact}>${settings.contactHeaderParams ? `;${settings.contactHeaderParams}` : ''}`],
      ['Expires', String(expires)],
      ['User-Agent', settings.userAgent],
      ['Allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE'],
      ...(settings.supported && settings.supported.length > 0 ? [['Supported', settings.supported.join(', ')] as [string, string]] : []),
    ]);
    if (this.#auth) {
      const auth = this.#auth;
      request.set(auth.header, answerChallenge(auth.challenge, auth.credentials, 'REGISTER', requestUri, auth.nc));
      auth.nc++;
    }
    this.#inFlight = !done;
    let answered = false;
    const finish = (response: SipResponse | undefined): void => {
      if (answered) return;
      answered = true;
      if (!done) this.#inFlight = false;
      if (done) {
        // The unregistering REGISTER: answer one challenge, then we are done either way.
        if (response && (response.status === 401 || response.status === 407) && !authRetry && this.#takeChallenge(response)) {
          this.#sendRegister(0, true, done);
          return;
        }
        done();
        return;
      }
      this.#handle(response, authRetry);
    };
    try {
      layer.sendRequest(request, settings.destination, {
        onResponse: (response) => {
          if (response.status >= 200) finish(response);
        },
        onTimeout: () => finish(undefined),
        onTransportError: () => finish(undefined),
      });
    } catch (error) {
      this.#env.log.warn({ err: error, registration: settings.id }, 'REGISTER not sent');
      finish(undefined);
    }
  }

  /** Takes the challenge of a 401/407 for the next REGISTER; false when no credentials answer it. */
  #takeChallenge(response: SipResponse): boolean {
    const proxy = response.status === 407;
    const values = proxy ? response.proxyAuthenticate() : response.wwwAuthenticate();
    const chosen = chooseChallenge(values, this.settings.credentials);
    if (!chosen) return false;
    this.#auth = { ...chosen, header: proxy ? 'Proxy-Authorization' : 'Authorization', nc: 1 };
    return true;
  }

  #handle(response: SipResponse | undefined, authRetry: boolean): void {
    if (this.#status === 'Stopped') return;
    const { settings, log } = { settings: this.settings, log: this.#env.log };
    this.#lastCode = response?.status;
    this.#lastReason = response ? `${response.status} ${response.reason}`.slice(0, 200) : 'no answer (timed out, or the REGISTER could not be sent)';
    if (!response) return this.#temporaryFailure(undefined);
    const status = response.status;
    if (status >= 200 && status < 300) {
      const granted = this.#grantedExpiry(response);
      if (granted <= 0) {
        log.warn({ registration: settings.id }, 'registrar granted no time to our contact');
        return this.#temporaryFailure(status);
      }
      this.#retries = 0;
      this.#expiresAt = Date.now() + granted * 1000;
      this.#setStatus('Registered', { code: status, expires: granted });
      // Refreshed ahead of expiry: 5 s before (as pjsip does), half-way for very short grants.
      const refreshIn = Math.max(granted / 2, granted - 5);
      this.#arm(refreshIn * 1000, () => this.#send(false));
      return;
    }
    if (status === 401 || status === 407) {
      const values = status === 407 ? response.proxyAuthenticate() : response.wwwAuthenticate();
      const stale = values.some((value) => /stale\s*=\s*"?true/i.test(value));
      if (!authRetry) this.#staleAnswers = 0;
      if (authRetry && stale && ++this.#staleAnswers > MAX_STALE_ANSWERS) {
        // Without this bound a registrar answering every REGISTER with a stale challenge would get
        // a new REGISTER per round trip, forever.
        log.warn({ registration: settings.id, status }, 'outbound registration: the registrar keeps calling our answers stale');
        this.#staleAnswers = 0;
        return this.#temporaryFailure(status);
      }
      if (authRetry && !stale) {
        log.warn({ registration: settings.id, status }, 'outbound registration: credentials refused');
        this.#auth = undefined;
        if (settings.authRejectionPermanent) return this.#reject(status);
        return this.#temporaryFailure(status);
      }
      if (!this.#takeChallenge(response)) {
        log.warn({ registration: settings.id, status }, 'outbound registration: no outbound_auth answers the challenge');
        return this.#reject(status);
      }
      return this.#send(true);
    }
    if (status === 423) {
      const minExpires = Number(response.get('min-expires') ?? '');
      if (Number.isInteger(minExpires) && minExpires > this.#expires && minExpires <= MAX_SECONDS && !authRetry) {
        this.#expires = minExpires;
        return this.#send(true);
      }
      return this.#fatalFailure(status);
    }
    if (status === 403) {
      if (settings.forbiddenRetryInterval > 0) return this.#retry(status, settings.forbiddenRetryInterval);
      return this.#reject(status);
    }
    if (TEMPORARY.has(status)) {
      const retryAfter = Number(response.get('retry-after')?.split(/[\s;(]/)[0] ?? '');
      return this.#temporaryFailure(status, Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
    }
    return this.#fatalFailure(status);
  }

  /** The expiry granted to our contact: its `expires` parameter in the 200, else Expires, else what we asked. */
  #grantedExpiry(response: SipResponse): number {
    const ours = this.settings.contact.toLowerCase().split(';')[0];
    const contacts = response.contacts();
    if (contacts !== 'wildcard') {
      for (const contact of contacts) {
        if (contact.uri.kind !== 'sip' || formatUri(contact.uri).toLowerCase().split(';')[0] !== ours) continue;
        const expires = contact.params.get('expires');
        if (expires && /^\d{1,10}$/.test(expires)) return Math.min(Number(expires), MAX_SECONDS);
      }
    }
    return Math.min(response.expires() ?? this.#expires, MAX_SECONDS);
  }

  #temporaryFailure(code: number | undefined, afterSeconds?: number): void {
    this.#retry(code, afterSeconds ?? this.settings.retryInterval);
  }

  #fatalFailure(code: number): void {
    if (this.settings.fatalRetryInterval > 0) return this.#retry(code, this.settings.fatalRetryInterval);
    this.#reject(code);
  }

  #retry(code: number | undefined, afterSeconds: number): void {
    this.#retries++;
    if (this.#retries > this.settings.maxRetries) {
      this.#env.log.warn({ registration: this.settings.id, code, retries: this.settings.maxRetries }, 'outbound registration: giving up after max_retries');
      return this.#reject(code);
    }
    this.#setStatus('Unregistered', code === undefined ? {} : { code });
    // WARN with the reason: an admin must see why a trunk is not registered without turning debug on.
    const reason = this.#lastReason;
    this.#env.log.warn({ registration: this.settings.id, code, reason, retryIn: afterSeconds }, `outbound registration ${this.settings.id} failed: ${reason}; retrying in ${afterSeconds} s`);
    this.#arm(afterSeconds * 1000, () => this.#send(false));
  }

  #reject(code: number | undefined): void {
    this.#disarm();
    this.#setStatus('Rejected', code === undefined ? {} : { code });
    const reason = this.#lastReason;
    this.#env.log.warn({ registration: this.settings.id, code, reason }, `outbound registration ${this.settings.id} rejected: ${reason}; not retried`);
  }
}
