// Registrar bindings (RFC 3261 §10.3) for address-of-record objects with Asterisk's `aor` rules:
// `max_contacts`, `remove_existing`, `minimum_expiration`, `maximum_expiration`,
// `default_expiration`, `remove_unavailable`. Pure bookkeeping on already-parsed REGISTER requests: it knows nothing of
// transports, authentication or endpoints. Expiry is driven by the caller's clock (`now`), and a
// single timer per registrar fires the nearest expiry.

export interface AorRules {
  readonly maxContacts: number;
  readonly removeExisting: boolean;
  readonly minimumExpiration: number;
  readonly maximumExpiration: number;
  readonly defaultExpiration: number;
  /** remove_unavailable: contacts the request calls unavailable make room first (see register()). */
  readonly removeUnavailable?: boolean;
}

export const DEFAULT_AOR_RULES: AorRules = Object.freeze({
  maxContacts: 0,
  removeExisting: false,
  minimumExpiration: 60,
  maximumExpiration: 7200,
  defaultExpiration: 3600,
});

/** Where the REGISTER came from: where requests for the binding are sent when NAT hides the Contact. */
export interface BindingSource {
  /** `ws`/`wss`: a browser's WebSocket (RFC 7118), the only way to reach it; the binding goes when it closes. */
  readonly transport: 'udp' | 'tcp' | 'tls' | 'ws' | 'wss';
  readonly address: string;
  readonly port: number;
  /** The listener (transport section) that took the REGISTER: a TCP or TLS connection lives there. */
  readonly listener?: string;
}

export interface Binding {
  readonly aor: string;
  /** The Contact URI as registered, e.g. `sip:alice@192.0.2.10:5062;transport=udp`: where requests go. */
  readonly uri: string;
  /**
   * The Contact URI as the phone wrote it, when the registrar stored another one (rewrite_contact
   * put the source address in `uri`): what the 200 OK lists, since phones look for their own Contact there.
   */
  readonly reportedUri?: string;
  readonly callId: string;
  readonly cseq: number;
  /** Absolute expiry, in milliseconds of the registrar's clock. */
  readonly expiresAt: number;
  readonly userAgent: string;
  readonly source: BindingSource;
  /** Path header values (RFC 3327), kept in order. */
  readonly path: readonly string[];
}

export interface RegisterContact {
  readonly uri: string;
  /** The URI as the phone wrote it, when `uri` is a rewritten one. */
  readonly reportedUri?: string;
  /** The Contact's `expires` parameter, when present. */
  readonly expires?: number;
}

export interface RegisterRequest {
  readonly aor: string;
  /** `Contact: *` */
  readonly wildcard: boolean;
  readonly contacts: readonly RegisterContact[];
  /** The Expires header, when present. */
  readonly expires?: number;
  readonly callId: string;
  readonly cseq: number;
  readonly userAgent?: string;
  readonly source: BindingSource;
  readonly path?: readonly string[];
  /** Whether an existing binding is unavailable (its qualify failed): asked only with remove_unavailable. */
  readonly unavailable?: (binding: Binding) => boolean;
}

export type RegisterOutcome =
  | { readonly status: 200; readonly bindings: readonly Binding[]; readonly added: readonly Binding[]; readonly removed: readonly Binding[]; readonly refreshed: readonly Binding[] }
  | { readonly status: 400 | 403 | 500; readonly reason: string }
  | { readonly status: 423; readonly reason: string; readonly minExpires: number };

/** Bounds: what one peer can make the registrar hold. */
export const MAX_CONTACTS_PER_REQUEST = 32;
export const MAX_BINDINGS_PER_AOR = 64;
export const MAX_URI_LENGTH = 1024;

export type BindingChange = { readonly kind: 'added' | 'removed' | 'refreshed' | 'expired'; readonly binding: Binding };

/**
 * URIs compare by RFC 3261 §19.1.4 in spirit: scheme and host case-insensitively, the user part
 * exactly, parameters ignored here (two registrations differing only in parameters are the same
 * device for a registrar in practice, as Asterisk treats them).
 */
export function bindingKey(uri: string): string {
  const trimmed = uri.trim();
  const semicolon = trimmed.indexOf(';');
  const base = semicolon < 0 ? trimmed : trimmed.slice(0, semicolon);
  const at = base.lastIndexOf('@');
  if (at < 0) return base.toLowerCase();
  const colon = base.indexOf(':');
  const scheme = colon >= 0 && colon < at ? base.slice(0, colon).toLowerCase() : '';
  const user = colon >= 0 && colon < at ? base.slice(colon + 1, at) : base.slice(0, at);
  return `${scheme}:${user}@${base.slice(at + 1).toLowerCase()}`;
}

export class Registrar {
  private readonly bindings = new Map<string, Map<string, Binding>>();
  private readonly listeners = new Set<(change: BindingChange) => void>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  onChange(listener: (change: BindingChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Current, unexpired bindings of an address of record, oldest first. */
  lookup(aor: string): Binding[] {
    const map = this.bindings.get(aor);
    if (!map) return [];
    const now = this.now();
    return [...map.values()].filter((binding) => binding.expiresAt > now);
  }

  /**
   * The live binding whose URI is `uri` (as stored), if any: how a request for a contact finds the
   * transport and connection it registered over. A scan of every binding: called per request sent
   * to a contact, never per packet.
   */
  findByUri(uri: string): Binding | undefined {
    const now = this.now();
    for (const map of this.bindings.values()) {
      for (const binding of map.values()) if (binding.uri === uri && binding.expiresAt > now) return binding;
    }
    return undefined;
  }

  /** Every address of record that has at least one binding. */
  aors(): string[] {
    return [...this.bindings.keys()];
  }

  /** Applies a REGISTER to `aor` under its rules; the outcome says what to answer. */
  register(request: RegisterRequest, rules: AorRules): RegisterOutcome {
    if (request.contacts.length > MAX_CONTACTS_PER_REQUEST) return { status: 400, reason: 'Too many contacts' };
    if (request.contacts.some((contact) => contact.uri.length === 0 || contact.uri.length > MAX_URI_LENGTH)) {
      return { status: 400, reason: 'Bad contact' };
    }
    const now = this.now();
    const existing = this.bindings.get(request.aor) ?? new Map<string, Binding>();
    // A REGISTER that only asks for the current bindings.
    if (!request.wildcard && request.contacts.length === 0) return this.answer(request.aor, [], [], []);

    if (request.wildcard) {
      // RFC 3261 §10.3 step 6: `*` only with Expires: 0 and no other contact.
      if (request.contacts.length > 0 || request.expires !== 0) return { status: 400, reason: 'Wildcard contact needs Expires: 0' };
      const removed = [...existing.values()];
      for (const binding of removed) {
        if (binding.callId === request.callId && request.cseq <= binding.cseq) return { status: 500, reason: 'Out of order CSeq' };
      }
      this.bindings.delete(request.aor);
      return this.answer(request.aor, [], removed, []);
    }

    const planned: { key: string; contact: RegisterContact; seconds: number }[] = [];
    for (const contact of request.contacts) {
      const asked = contact.expires ?? request.expires ?? rules.defaultExpiration;
      if (!Number.isFinite(asked) || asked < 0) return { status: 400, reason: 'Bad expires value' };
      let seconds = Math.min(Math.floor(asked), rules.maximumExpiration);
      if (seconds > 0 && seconds < rules.minimumExpiration) {
        return { status: 423, reason: 'Interval Too Brief', minExpires: rules.minimumExpiration };
      }
      if (seconds < 0) seconds = 0;
      planned.push({ key: bindingKey(contact.uri), contact, seconds });
    }
    for (const { key } of planned) {
      const old = existing.get(key);
      if (old && old.callId === request.callId && request.cseq <= old.cseq) return { status: 500, reason: 'Out of order CSeq' };
    }

    const next = new Map(existing);
    const added: Binding[] = [];
    const removed: Binding[] = [];
    const refreshed: Binding[] = [];
    for (const { key, contact, seconds } of planned) {
      const old = next.get(key);
      if (seconds === 0) {
        if (old) {
          next.delete(key);
          removed.push(old);
        }
        continue;
      }
      const binding: Binding = {
        aor: request.aor,
        uri: contact.uri,
        ...(contact.reportedUri !== undefined && contact.reportedUri !== contact.uri ? { reportedUri: contact.reportedUri } : {}),
        callId: request.callId,
        cseq: request.cseq,
        expiresAt: now + seconds * 1000,
        userAgent: request.userAgent ?? '',
        source: request.source,
        path: request.path ?? [],
      };
      // Re-inserting keeps insertion order = age order for remove_existing.
      next.delete(key);
      next.set(key, binding);
      (old ? refreshed : added).push(binding);
    }
    // Expired bindings do not count against max_contacts.
    for (const [key, binding] of next) {
      if (binding.expiresAt <= now) {
        next.delete(key);
        removed.push(binding);
      }
    }
    const limit = Math.min(rules.maxContacts > 0 ? rules.maxContacts : MAX_BINDINGS_PER_AOR, MAX_BINDINGS_PER_AOR);
    const renewed = new Set(planned.map((entry) => entry.key));
    if (next.size > limit && rules.removeUnavailable && request.unavailable) {
      // remove_unavailable, as res_pjsip_registrar: the unavailable bindings this request does not
      // renew go first, the soonest to expire first; without remove_existing only when they are
      // enough to make room (else the REGISTER is refused and nothing is removed).
      const unavailable = [...next].filter(([key, binding]) => !renewed.has(key) && request.unavailable!(binding)).sort((a, b) => a[1].expiresAt - b[1].expiresAt);
      if (rules.removeExisting || next.size - unavailable.length <= limit) {
        for (const [key, binding] of unavailable) {
          if (next.size <= limit) break;
          next.delete(key);
          removed.push(binding);
        }
      }
    }
    if (next.size > limit) {
      if (!rules.removeExisting) return { status: 403, reason: 'Maximum number of contacts reached' };
      // remove_existing: the oldest bindings not renewed by this request make room.
      for (const [key, binding] of next) {
        if (next.size <= limit) break;
        if (renewed.has(key)) continue;
        next.delete(key);
        removed.push(binding);
      }
      if (next.size > limit) return { status: 403, reason: 'Maximum number of contacts reached' };
    }
    if (next.size === 0) this.bindings.delete(request.aor);
    else this.bindings.set(request.aor, next);
    this.schedule();
    return this.answer(request.aor, added, removed, refreshed);
  }

  /** Drops every binding of an address of record (the object was deleted). */
  clear(aor: string): void {
    const map = this.bindings.get(aor);
    if (!map) return;
    this.bindings.delete(aor);
    for (const binding of map.values()) this.emit({ kind: 'removed', binding });
  }

  /** Drops the bindings that match (those of a WebSocket that closed); how many went. */
  removeWhere(matches: (binding: Binding) => boolean): number {
    let removed = 0;
    for (const [aor, map] of this.bindings) {
      for (const [key, binding] of map) {
        if (!matches(binding)) continue;
        map.delete(key);
        removed++;
        this.emit({ kind: 'removed', binding });
      }
      if (map.size === 0) this.bindings.delete(aor);
    }
    if (removed > 0) this.schedule();
    return removed;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.bindings.clear();
    this.listeners.clear();
  }

  /** Removes expired bindings now (also run by the registrar's own timer). */
  expire(): void {
    const now = this.now();
    for (const [aor, map] of this.bindings) {
      for (const [key, binding] of map) {
        if (binding.expiresAt > now) continue;
        map.delete(key);
        this.emit({ kind: 'expired', binding });
      }
      if (map.size === 0) this.bindings.delete(aor);
    }
    this.schedule();
  }

  private answer(aor: string, added: Binding[], removed: Binding[], refreshed: Binding[]): RegisterOutcome {
    for (const binding of removed) this.emit({ kind: 'removed', binding });
    for (const binding of added) this.emit({ kind: 'added', binding });
    for (const binding of refreshed) this.emit({ kind: 'refreshed', binding });
    return { status: 200, bindings: this.lookup(aor), added, removed, refreshed };
  }

  private emit(change: BindingChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure must not stop the registrar's bookkeeping.
      }
    }
  }

  private schedule(): void {
    let nearest = Infinity;
    for (const map of this.bindings.values()) for (const binding of map.values()) nearest = Math.min(nearest, binding.expiresAt);
    if (nearest === this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = nearest;
    if (nearest === Infinity) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.expire();
    }, Math.max(0, Math.min(nearest - this.now(), 2 ** 31 - 1)) + 5);
    this.timer.unref();
  }
}
