// Qualifying contacts, as Asterisk's res_pjsip does for AORs with `qualify_frequency` > 0: every
// contact of such an AOR (registered or static `contact=`) gets an OPTIONS every
// `qualify_frequency` seconds; any response within `qualify_timeout` seconds makes it Reachable
// (with the round trip measured), no response or a transport error Unreachable; with the AOR's
// `qualify_2xx_only` only a 2xx is Reachable. A 401/407 is answered once per challenge with the
// credentials of the target (the outbound_auth of an endpoint naming the AOR, as Asterisk's
// out-of-dialog requests always do) and the answer to that counts. A contact registered with a
// Path (support_path) is probed through it. Probes are jittered
// so that many contacts do not fire together, and at most MAX_IN_FLIGHT are outstanding at once
// (the others wait a moment). Knows nothing of endpoints or events: it reports status changes.
import type { Logger } from 'pino';
import { newCallId, newTag, SipRequest } from '../../sip/message.ts';
import type { ClientHandlers, ClientTransaction, TransactionLayer } from '../../sip/transaction/index.ts';
import type { Destination } from '../../sip/transport.ts';
import { formatUri, parseNameAddr, parseUri } from '../../sip/uri.ts';
import type { DigestCredentials } from '../../sip/auth/digest-client.ts';
import { RequestChallenges } from '../../sip/auth/request-challenges.ts';

export type QualifyStatus = 'Unknown' | 'Reachable' | 'Unreachable';

/** One contact to qualify. */
export interface QualifyTarget {
  readonly aor: string;
  /** The contact URI, as registered or configured. */
  readonly uri: string;
  /** Seconds between probes (> 0). */
  readonly frequency: number;
  /** Seconds a probe waits for a response. */
  readonly timeout: number;
  /** qualify_2xx_only: a final answer other than 2xx is Unreachable. */
  readonly only2xx?: boolean;
  /** Credentials answering a challenge to the OPTIONS (none: the challenge is the answer). */
  readonly credentials?: readonly DigestCredentials[];
  /** The Path the contact registered with (support_path): the probe goes to its first hop, with it as Route. */
  readonly path?: readonly string[];
}

export interface QualifyState {
  readonly status: QualifyStatus;
  /** Round trip of the last answered probe, in microseconds; 0 before any. */
  readonly roundtripUsec: number;
}

export interface QualifierServices {
  /** The transaction layer, or undefined while SIP is not running. */
  layer(): TransactionLayer | undefined;
  readonly signallingHost: string;
  readonly signallingPort: number;
  readonly userAgent: string;
  readonly log: Logger;
  /** Where a contact URI is sent (undefined: unroutable, the contact is Unreachable). */
  destinationOf(uri: string): Destination | undefined;
  /** A contact's status changed (also on its first result). */
  onChange(target: QualifyTarget, state: QualifyState): void;
}

/** Probes outstanding at once; beyond it a probe waits POSTPONE_MS. */
export const MAX_IN_FLIGHT = 64;
/** Contacts qualified at most (all AORs together); further ones are not probed. */
export const MAX_QUALIFIED_CONTACTS = 10_000;
const POSTPONE_MS = 200;
/** A new contact is first probed within this many milliseconds (spread, not all at once). */
const FIRST_PROBE_SPREAD_MS = 500;

interface Entry {
  target: QualifyTarget;
  state: QualifyState;
  timer: NodeJS.Timeout | undefined;
  probe: ClientTransaction | undefined;
  deadline: NodeJS.Timeout | undefined;
}

const keyOf = (aor: string, uri: string): string => `${aor}\n${uri}`;

export class ContactQualifier {
  readonly #services: QualifierServices;
  readonly #entries = new Map<string, Entry>();
  #inFlight = 0;
  #closed = false;

  constructor(services: QualifierServices) {
    this.#services = services;
  }

  /** The last known status of a contact, or undefined when it is not qualified. */
  state(aor: string, uri: string): QualifyState | undefined {
    return this.#entries.get(keyOf(aor, uri))?.state;
  }

  /**
   * Makes the set of qualified contacts equal to `targets`: new ones are scheduled (a first probe
   * soon), gone ones stopped, changed frequencies take effect at the next probe.
   */
  sync(targets: readonly QualifyTarget[]): void {
    if (this.#closed) return;
    const wanted = new Map<string, QualifyTarget>();
    for (const target of targets) {
      if (target.frequency <= 0 || wanted.size >= MAX_QUALIFIED_CONTACTS) continue;
      wanted.set(keyOf(target.aor, target.uri), target);
    }
    for (const [key, entry] of this.#entries) {
      if (!wanted.has(key)) this.#stop(key, entry);
    }
    for (const [key, target] of wanted) {
      const entry = this.#entries.get(key);
      if (entry) {
        entry.target = target;
        continue;
      }
      const created: Entry = { target, state: { status: 'Unknown', roundtripUsec: 0 }, timer: undefined, probe: undefined, deadline: undefined };
      this.#entries.set(key, created);
      this.#schedule(created, Math.floor(Math.random() * FIRST_PROBE_SPREAD_MS));
    }
  }

  close(): void {
    this.#closed = true;
    for (const [key, entry] of this.#entries) this.#stop(key, entry);
  }

  #stop(key: string, entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    this.#finishProbe(entry);
    entry.timer = undefined;
    this.#entries.delete(key);
  }

  #schedule(entry: Entry, delayMs: number): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.#probe(entry);
    }, delayMs);
    entry.timer.unref?.();
  }

  /** The next probe: the frequency, less up to 10 % so that contacts drift apart. */
  #next(entry: Entry): void {
    const periodMs = entry.target.frequency * 1000;
    this.#schedule(entry, Math.max(100, Math.round(periodMs - Math.random() * periodMs * 0.1)));
  }

  #probe(entry: Entry): void {
    if (this.#closed || this.#entries.get(keyOf(entry.target.aor, entry.target.uri)) !== entry) return;
    const layer = this.#services.layer();
    if (!layer) return this.#next(entry);
    if (this.#inFlight >= MAX_IN_FLIGHT) return this.#schedule(entry, POSTPONE_MS + Math.floor(Math.random() * POSTPONE_MS));
    const { target } = entry;
    const uri = parseUri(target.uri.replace(/^<|>$/g, ''));
    const firstHop = target.path && target.path.length > 0 ? parseNameAddr(target.path[0])?.uri : undefined;
    const hop = firstHop && firstHop.kind === 'sip' ? firstHop : undefined;
    const destination = uri && uri.kind === 'sip' ? this.#services.destinationOf(hop ? formatUri(hop) : target.uri) : undefined;
    if (!uri || uri.kind !== 'sip' || !destination) {
      this.#result(entry, 'Unreachable', 0);
      return this.#next(entry);
    }
    const host = this.#services.signallingHost;
    const request = new SipRequest('OPTIONS', uri, [
      ['From', `<sip:qualify@${host.includes(':') ? `[${host}]` : host}>;tag=${newTag()}`],
      ['To', `<${target.uri.replace(/^<|>$/g, '')}>`],
      ['Call-ID', newCallId()],
      ['CSeq', '1 OPTIONS'],
      ['Max-Forwards', '70'],
      ['User-Agent', this.#services.userAgent],
      ['Accept', 'application/sdp'],
      ...(hop && target.path ? [['Route', target.path.join(', ')] as [string, string]] : []),
    ]);
    const started = process.hrtime.bigint();
    this.#inFlight++;
    const settle = (status: 'Reachable' | 'Unreachable', abandon: boolean): void => {
      if (!entry.probe && !entry.deadline) return;
      this.#finishProbe(entry, abandon);
      const usec = status === 'Reachable' ? Math.max(1, Number((process.hrtime.bigint() - started) / 1000n)) : 0;
      this.#result(entry, status, usec);
      this.#next(entry);
    };
    let challenges: RequestChallenges | undefined;
    let last = request;
    const handlers: ClientHandlers = {
      onResponse: (response, tx) => {
        // Only the outstanding try counts: a challenged one is over, a stopped probe's answer is late.
        if (response.status < 200 || entry.probe !== tx) return;
        if ((response.status === 401 || response.status === 407) && target.credentials && target.credentials.length > 0) {
          challenges ??= new RequestChallenges(target.credentials);
          const outcome = challenges.retry(last, response);
          if (outcome.ok) {
            try {
              // The same probe, answered: the in-flight count and the deadline carry over.
              last = outcome.request;
              entry.probe = layer.sendRequest(outcome.request, destination, handlers);
              return;
            } catch (error) {
              this.#services.log.debug({ err: error, contact: target.uri }, 'authenticated qualify OPTIONS not sent');
            }
          }
        }
        settle(target.only2xx && response.status >= 300 ? 'Unreachable' : 'Reachable', false);
      },
      onTimeout: (tx) => {
        if (entry.probe === tx) settle('Unreachable', false);
      },
      onTransportError: (_error, tx) => {
        if (entry.probe === tx) settle('Unreachable', false);
      },
    };
    try {
      entry.probe = layer.sendRequest(request, destination, handlers);
    } catch (error) {
      // The transaction table is full: try again later rather than call the contact unreachable.
      this.#inFlight--;
      this.#services.log.debug({ err: error, contact: target.uri }, 'qualify OPTIONS not sent');
      return this.#next(entry);
    }
    entry.deadline = setTimeout(() => settle('Unreachable', true), Math.max(1, Math.round(target.timeout * 1000)));
    entry.deadline.unref?.();
  }

  /**
   * Ends an outstanding probe. `abandon` (qualify_timeout passed, or the contact went away) ends its
   * transaction too, so a late response is ignored; a transaction that got its answer ends itself.
   */
  #finishProbe(entry: Entry, abandon = true): void {
    if (entry.deadline) clearTimeout(entry.deadline);
    entry.deadline = undefined;
    const probe = entry.probe;
    if (probe) {
      entry.probe = undefined;
      this.#inFlight--;
      if (abandon) probe.terminate();
    }
  }

  #result(entry: Entry, status: 'Reachable' | 'Unreachable', roundtripUsec: number): void {
    const previous = entry.state.status;
    entry.state = { status, roundtripUsec: status === 'Reachable' ? roundtripUsec : entry.state.roundtripUsec };
    if (previous !== status) this.#services.onChange(entry.target, { status, roundtripUsec });
  }
}
