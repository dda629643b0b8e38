// The failed-digest budget of inbound SIP authentication: password guesses are counted per source
// address and per endpoint, and past either budget the guesses are refused without being checked,
// for a while. A source is blocked outright; an endpoint is blocked for every source but the ones
// it authenticated from lately, so that a guesser spraying from many addresses cannot lock the
// endpoint's own phone out. Bounded memory: the least recently failed entries are forgotten first.

export interface SipAuthFailureLimits {
  /** Failed guesses from one address in a window before it is blocked; 0 = no limit. */
  readonly maxPerSource: number;
  /** Failed guesses at one endpoint (from anywhere) in a window before it is blocked; 0 = no limit. */
  readonly maxPerEndpoint: number;
  readonly windowSeconds: number;
  readonly blockSeconds: number;
  /** Sources and endpoints remembered at once, each. */
  readonly tracked: number;
}

interface Counter {
  failures: number;
  windowStart: number;
  blockedUntil: number;
}

/** Addresses an endpoint authenticated from, kept per endpoint: they stay allowed through its block. */
const TRUSTED_PER_ENDPOINT = 8;

export type BlockEvent = { readonly kind: 'source' | 'endpoint'; readonly key: string; readonly seconds: number };

class Budget {
  readonly #counters = new Map<string, Counter>();
  readonly #limit: number;
  readonly #limits: SipAuthFailureLimits;
  readonly #now: () => number;

  constructor(limit: number, limits: SipAuthFailureLimits, now: () => number) {
    this.#limit = limit;
    this.#limits = limits;
    this.#now = now;
  }

  get blockedCount(): number {
    const now = this.#now();
    let count = 0;
    for (const counter of this.#counters.values()) if (counter.blockedUntil > now) count += 1;
    return count;
  }

  blocked(key: string): boolean {
    const counter = this.#counters.get(key);
    return counter !== undefined && counter.blockedUntil > this.#now();
  }

  /** Counts one failure; true when it started a block. */
  fail(key: string): boolean {
    if (this.#limit === 0) return false;
    const now = this.#now();
    let counter = this.#counters.get(key);
    if (counter) this.#counters.delete(key);
    else counter = { failures: 0, windowStart: now, blockedUntil: 0 };
    // Re-inserted: the map's order is least recently failed first.
    this.#counters.set(key, counter);
    if (this.#counters.size > this.#limits.tracked) this.#counters.delete(this.#counters.keys().next().value!);
    if (now - counter.windowStart >= this.#limits.windowSeconds * 1000) {
      counter.failures = 0;
      counter.windowStart = now;
    }
    counter.failures += 1;
    if (counter.failures < this.#limit || counter.blockedUntil > now) return false;
    counter.blockedUntil = now + this.#limits.blockSeconds * 1000;
    counter.failures = 0;
    counter.windowStart = counter.blockedUntil;
    return true;
  }
}

export class SipAuthFailures {
  readonly #sources: Budget;
  readonly #endpoints: Budget;
  readonly #limits: SipAuthFailureLimits;
  /** Endpoint → the addresses it last authenticated from (most recent last). */
  readonly #trusted = new Map<string, string[]>();
  /** Since start: guesses that failed the check, and requests refused by a block without one. */
  failures = 0;
  refused = 0;

  constructor(limits: SipAuthFailureLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#sources = new Budget(limits.maxPerSource, limits, now);
    this.#endpoints = new Budget(limits.maxPerEndpoint, limits, now);
  }

  /** Sources and endpoints blocked right now. */
  get blockedSources(): number {
    return this.#sources.blockedCount;
  }

  get blockedEndpoints(): number {
    return this.#endpoints.blockedCount;
  }

  sourceBlocked(address: string): boolean {
    return this.#sources.blocked(address);
  }

  /** Whether a guess at the endpoint from the address must be refused unchecked. */
  endpointBlocked(endpoint: string, address: string): boolean {
    return this.#endpoints.blocked(endpoint) && !(this.#trusted.get(endpoint)?.includes(address) ?? false);
  }

  /** Counts a refusal by a block (no check was made). */
  refusedUnchecked(): void {
    this.refused += 1;
  }

  /** A failed guess; the blocks it started, if any. */
  failed(address: string, endpoint: string | undefined): BlockEvent[] {
    this.failures += 1;
    const started: BlockEvent[] = [];
    if (this.#sources.fail(address)) started.push({ kind: 'source', key: address, seconds: this.#limits.blockSeconds });
    if (endpoint !== undefined && this.#endpoints.fail(endpoint)) started.push({ kind: 'endpoint', key: endpoint, seconds: this.#limits.blockSeconds });
    return started;
  }

  /** A successful authentication: the address stays allowed through a later block of the endpoint. */
  succeeded(endpoint: string, address: string): void {
    const list = this.#trusted.get(endpoint) ?? [];
    const known = list.indexOf(address);
    if (known >= 0) list.splice(known, 1);
    list.push(address);
    if (list.length > TRUSTED_PER_ENDPOINT) list.shift();
    this.#trusted.delete(endpoint);
    this.#trusted.set(endpoint, list);
    if (this.#trusted.size > this.#limits.tracked) this.#trusted.delete(this.#trusted.keys().next().value!);
  }
}
