// SIP registrations cluster-wide (docs/cluster.md, "Registrations"): the contacts each member's
// registrar binds are written to the KV bucket pb_<c>_contacts, one key per member and contact;
// every member watches the bucket and keeps a local copy, so that the pjsip technology's dialer
// asks it synchronously when it resolves `PJSIP/alice`. The technology sees only the
// ContactDirectory hook it declares; this file is the cluster's side of it.
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { ContactDirectory, SharedContact } from '../channels/pjsip/contact-directory.ts';
import { bindingKey, MAX_URI_LENGTH, type Binding, type BindingChange } from '../sip/registrar.ts';
import { subjectToken } from './wire.ts';
import { parseJsonObject } from '../util/json-object.ts';

/**
 * How long an entry stays in the bucket after its last write. NATS 2.9 has no per-key TTL, so the
 * bucket's max_age is the upper bound and each entry carries its own expiry, which readers check:
 * a registration (at most maximum_expiration, 7200 s by default) is rewritten by every refresh.
 */
export const CONTACTS_MAX_AGE_MS = 24 * 3600 * 1000;
/** Most contacts kept from the bucket: what other members' writes can make this one hold. */
export const MAX_SHARED_CONTACTS = 100_000;
const MAX_NAME_LENGTH = 256;
/** How often expired entries leave the local copy (readers skip them anyway; an endpoint registered only through them goes offline then). */
const SWEEP_MS = 5_000;
/** Changes are told to the listeners at most this often: a burst of registrations is one refresh of the endpoints' states. */
const NOTIFY_MS = 100;
const TRANSPORTS: ReadonlySet<string> = new Set(['udp', 'tcp', 'tls', 'ws', 'wss']);

export interface ClusterContactsOptions {
  readonly kv: KV;
  readonly node: string;
  readonly log: Logger;
  readonly now?: () => number;
}

/** The bucket key of a member's contact: `<aor>.<member>.<digest of the contact>`, each a valid token. */
export function contactKey(aor: string, holder: string, uri: string): string {
  const digest = createHash('sha256').update(bindingKey(uri)).digest('hex').slice(0, 24);
  return `${subjectToken(aor)}.${subjectToken(holder)}.${digest}`;
}

/** A bucket value, checked field by field: anything else is ignored. */
export function decodeSharedContact(data: Uint8Array): SharedContact | undefined {
  if (data.length > 4 * MAX_URI_LENGTH) return undefined;
  const v = parseJsonObject(data);
  if (typeof v === 'string') return undefined;
  const text = (field: unknown, max: number): field is string => typeof field === 'string' && field.length > 0 && field.length <= max;
  if (!text(v.aor, MAX_NAME_LENGTH) || !text(v.uri, MAX_URI_LENGTH) || !text(v.holder, MAX_NAME_LENGTH)) return undefined;
  if (typeof v.transport !== 'string' || !TRANSPORTS.has(v.transport)) return undefined;
  if (typeof v.expiresAt !== 'number' || !Number.isFinite(v.expiresAt)) return undefined;
  const contact: SharedContact = { aor: v.aor, uri: v.uri, holder: v.holder, transport: v.transport as SharedContact['transport'], expiresAt: v.expiresAt };
  if (v.flow === undefined) return contact;
  // The holder's address on the phone's connection (sip-flows.ts): a host and a port, or the entry is not taken.
  const flow = v.flow as Record<string, unknown> | null;
  if (typeof flow !== 'object' || flow === null || !text(flow.host, 255) || !/^[A-Za-z0-9.:[\]_-]+$/.test(flow.host)) return undefined;
  if (typeof flow.port !== 'number' || !Number.isInteger(flow.port) || flow.port < 1 || flow.port > 65535) return undefined;
  return { ...contact, flow: { host: flow.host, port: flow.port } };
}

export class ClusterContacts implements ContactDirectory {
  private readonly byAor = new Map<string, Map<string, SharedContact>>();
  private readonly aorOfKey = new Map<string, string>();
  private readonly now: () => number;
  private stopWatching: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private overflowLogged = false;
  private writeFailureLogged = false;
  private readonly listeners = new Set<() => void>();
  private notifyTimer: NodeJS.Timeout | undefined;
  /**
   * The address this member shows a phone on its connection (a TCP, TLS or WebSocket binding),
   * written beside the contact so that another member can call it through this one (sip-flows.ts).
   */
  advertisedFor: ((binding: Binding) => { host: string; port: number } | undefined) | undefined;
  /** Contacts of this member written to the bucket, and withdrawn (for /admin/cluster). */
  shared = 0;
  withdrawn = 0;

  constructor(private readonly options: ClusterContactsOptions) {
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const watcher = await this.options.kv.watch();
    this.stopWatching = () => watcher.stop();
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') this.stored(entry.key, entry.value);
        else this.forget(entry.key);
      }
    })().catch((err: unknown) => this.options.log.warn({ err }, 'cluster contacts watch ended'));
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweepTimer.unref();
  }

  stop(): void {
    this.stopWatching?.();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Other members' contacts changed: the listeners hear it once per NOTIFY_MS however many changed. */
  private changed(holder: string): void {
    if (holder === this.options.node || this.notifyTimer !== undefined || this.listeners.size === 0) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = undefined;
      for (const listener of this.listeners) listener();
    }, NOTIFY_MS);
    this.notifyTimer.unref();
  }

  bindingChanged(change: BindingChange): void {
    if (change.kind === 'added' || change.kind === 'refreshed') this.put(change.binding);
    else this.remove(change.binding);
  }

  share(bindings: readonly Binding[]): void {
    for (const binding of bindings) this.put(binding);
  }

  contactsOf(aor: string): readonly SharedContact[] {
    const contacts = this.byAor.get(aor);
    if (!contacts) return [];
    const now = this.now();
    return [...contacts.values()].filter((contact) => contact.expiresAt > now && contact.holder !== this.options.node);
  }

  /** How many live contacts other members hold (for /admin/cluster). */
  get known(): number {
    const now = this.now();
    let count = 0;
    for (const contacts of this.byAor.values()) for (const contact of contacts.values()) if (contact.expiresAt > now && contact.holder !== this.options.node) count++;
    return count;
  }

  private put(binding: Binding): void {
    const flow = binding.source.transport === 'udp' ? undefined : this.advertisedFor?.(binding);
    const contact: SharedContact = { aor: binding.aor, uri: binding.uri, expiresAt: binding.expiresAt, transport: binding.source.transport, holder: this.options.node, ...(flow ? { flow } : {}) };
    this.shared++;
    this.write(this.options.kv.put(contactKey(binding.aor, this.options.node, binding.uri), JSON.stringify(contact)));
  }

  private remove(binding: Binding): void {
    this.withdrawn++;
    this.write(this.options.kv.delete(contactKey(binding.aor, this.options.node, binding.uri)));
  }

  /** A write is not waited for (the registrar answers the phone at once); a failure is logged once per outage. */
  private write(done: Promise<unknown>): void {
    done.then(
      () => {
        this.writeFailureLogged = false;
      },
      (err: unknown) => {
        if (this.writeFailureLogged) return;
        this.writeFailureLogged = true;
        this.options.log.warn({ err }, 'cluster: a registration could not be shared (other members may not reach the phone until it registers again)');
      },
    );
  }

  private stored(key: string, data: Uint8Array): void {
    const contact = decodeSharedContact(data);
    // A value under a key it does not belong to is another writer's mistake (or hostile): ignored.
    if (!contact || contactKey(contact.aor, contact.holder, contact.uri) !== key) {
      this.forget(key);
      return;
    }
    if (!this.aorOfKey.has(key) && this.aorOfKey.size >= MAX_SHARED_CONTACTS) {
      if (!this.overflowLogged) this.options.log.warn({ limit: MAX_SHARED_CONTACTS }, 'cluster: too many shared registrations, the newest are not kept');
      this.overflowLogged = true;
      return;
    }
    this.aorOfKey.set(key, contact.aor);
    let contacts = this.byAor.get(contact.aor);
    if (!contacts) this.byAor.set(contact.aor, (contacts = new Map()));
    contacts.set(key, contact);
    this.changed(contact.holder);
  }

  private forget(key: string): void {
    const aor = this.aorOfKey.get(key);
    if (aor === undefined) return;
    this.aorOfKey.delete(key);
    const contacts = this.byAor.get(aor);
    const contact = contacts?.get(key);
    contacts?.delete(key);
    if (contacts?.size === 0) this.byAor.delete(aor);
    if (contact) this.changed(contact.holder);
  }

  private sweep(): void {
    const now = this.now();
    for (const contacts of this.byAor.values()) for (const [key, contact] of contacts) if (contact.expiresAt <= now) this.forget(key);
  }
}
