// Global variables and the astdb cluster-wide (docs/cluster.md, "Global variables and astdb"):
// each is mirrored through a KV bucket. A write made here goes to the bucket; every member watches
// the bucket and applies the others' writes to its own store, so reads stay local and synchronous.
// The bucket's order decides: the last write in it (the highest revision) is the value everywhere.
// A member keeps, per name, the revision of its own last write there, and applies another's write
// only when it is newer; while its own write is on its way (revision not known yet) another's is
// held and decided when the revision comes. A watcher may skip superseded revisions of a key (the
// bucket keeps one per key), so nothing here counts on seeing every write.
import { createHash, randomUUID } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { SharedStore, SharedWrite } from '../core/shared-writes.ts';
import { subjectToken } from './wire.ts';
import { parseJsonObject } from '../util/json-object.ts';

/** Longest name accepted from the bucket (an astdb path is at most 514 characters). */
const MAX_NAME_LENGTH = 1024;
/** Largest value accepted from the bucket (a variable's value is bounded tighter by the store). */
const MAX_ENTRY_BYTES = 256 * 1024;
/** Escaped names longer than this become a digest: a KV key is a subject, and subjects stay short. */
const MAX_KEY_TOKEN = 200;

/** The bucket key of a name: its escaped form, or a digest of it when that would be long. */
export function sharedKey(name: string): string {
  const token = subjectToken(name);
  return token.length <= MAX_KEY_TOKEN ? token : `h=${createHash('sha256').update(name).digest('hex')}`;
}

interface Entry {
  readonly name: string;
  /** Absent: the name was removed (a tombstone, so that the name travels with its removal). */
  readonly value?: string;
  /** The writer's instance: a member skips its own writes coming back. */
  readonly origin: string;
}

/** A bucket value, checked: undefined for anything malformed. */
export function decodeSharedEntry(data: Uint8Array): Entry | undefined {
  if (data.length > MAX_ENTRY_BYTES) return undefined;
  const v = parseJsonObject(data);
  if (typeof v === 'string') return undefined;
  if (typeof v.name !== 'string' || v.name === '' || v.name.length > MAX_NAME_LENGTH) return undefined;
  if (typeof v.origin !== 'string' || v.origin.length > 64) return undefined;
  if (v.value !== undefined && typeof v.value !== 'string') return undefined;
  return { name: v.name, origin: v.origin, ...(typeof v.value === 'string' ? { value: v.value } : {}) };
}

export interface SharedStateMirrorOptions {
  readonly kv: KV;
  readonly store: SharedStore;
  /** What the store holds, for the log (`global variables`, `astdb`). */
  readonly what: string;
  readonly log: Logger;
}

export class SharedStateMirror {
  /** This instance's writes, told apart from a restarted member's earlier ones. */
  private readonly origin = randomUUID();
  /** Per key: own writes not yet stored, the revision of the newest stored, another's write held meanwhile. */
  private readonly own = new Map<string, { inFlight: number; revision: number; held?: { revision: number; write: SharedWrite } }>();
  private stopWatching: (() => void) | undefined;
  private refusedLogged = false;
  private writeFailureLogged = false;
  /** Writes sent to the bucket, and others' writes applied here (for /admin/cluster). */
  sent = 0;
  applied = 0;
  /** The highest bucket revision the watcher has processed (applied, or skipped as own/stale/hostile). */
  private seen = 0;
  /** Waits for the watcher to reach a revision (kv-seen.ts), each with its timer. */
  private readonly seenWaiters = new Set<{ revision: number; done: (reached: boolean) => void }>();
  /** Own writes on their way to the bucket, and the highest revision an own write was stored at. */
  private readonly puts = new Set<Promise<void>>();
  private lastOwnRevision = 0;

  constructor(private readonly options: SharedStateMirrorOptions) {}

  async start(): Promise<void> {
    const watcher = await this.options.kv.watch();
    this.stopWatching = () => watcher.stop();
    this.options.store.onWrite = (write) => this.written(write);
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') this.received(entry.key, entry.value, entry.revision);
        this.reached(entry.revision);
      }
    })().catch((err: unknown) => this.options.log.warn({ err }, `cluster ${this.options.what} watch ended`));
  }

  stop(): void {
    this.options.store.onWrite = undefined;
    this.stopWatching?.();
    for (const waiter of this.seenWaiters) waiter.done(false);
  }

  /** The highest revision of the bucket this member's watcher has processed. */
  get seenRevision(): number {
    return this.seen;
  }

  /** Waiting (kv-seen) requests now: the responder bounds them. */
  get waiting(): number {
    return this.seenWaiters.size;
  }

  /**
   * Once every own write made before this call is stored (or failed): the highest revision an own
   * write was stored at (0: none yet). A write made in this turn of the event loop (an ARI handler's)
   * is among them, since the store tells onWrite synchronously.
   */
  async ownWritesStored(): Promise<number> {
    await Promise.all([...this.puts]);
    return this.lastOwnRevision;
  }

  /** True once the watcher has processed `revision`; false after `timeoutMs` (or at stop). */
  waitSeen(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.seen >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        revision,
        done: (reached: boolean) => {
          clearTimeout(timer);
          this.seenWaiters.delete(waiter);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      this.seenWaiters.add(waiter);
    });
  }

  private reached(revision: number): void {
    if (revision <= this.seen) return;
    this.seen = revision;
    for (const waiter of this.seenWaiters) if (waiter.revision <= revision) waiter.done(true);
  }

  private written(write: SharedWrite): void {
    const key = sharedKey(write.name);
    const entry: Entry = { name: write.name, origin: this.origin, ...(write.value !== undefined ? { value: write.value } : {}) };
    const own = this.own.get(key) ?? { inFlight: 0, revision: 0 };
    own.inFlight++;
    this.own.set(key, own);
    this.sent++;
    const put = this.options.kv.put(key, JSON.stringify(entry)).then(
      (revision) => {
        this.writeFailureLogged = false;
        own.revision = Math.max(own.revision, revision);
        this.lastOwnRevision = Math.max(this.lastOwnRevision, revision);
        this.settle(key, own);
      },
      (err: unknown) => {
        this.settle(key, own);
        if (this.writeFailureLogged) return;
        this.writeFailureLogged = true;
        this.options.log.warn({ err, name: write.name }, `cluster: a write to the ${this.options.what} was not shared (the other members keep their value)`);
      },
    );
    this.puts.add(put);
    void put.finally(() => this.puts.delete(put));
  }

  private received(key: string, data: Uint8Array, revision: number): void {
    const entry = decodeSharedEntry(data);
    if (!entry || sharedKey(entry.name) !== key || entry.origin === this.origin) return;
    const write: SharedWrite = { name: entry.name, value: entry.value };
    const own = this.own.get(key);
    if (own && own.inFlight > 0) {
      if (!own.held || own.held.revision < revision) own.held = { revision, write };
      return;
    }
    if (own && revision < own.revision) return;
    this.apply(write);
  }

  private apply(write: SharedWrite): void {
    try {
      this.options.store.applyShared(write);
      this.applied++;
    } catch (err) {
      // Beyond this member's own bounds (or a malformed name): kept out, said once.
      if (!this.refusedLogged) this.options.log.warn({ err, name: write.name.slice(0, 100) }, `cluster: a shared write to the ${this.options.what} was refused here`);
      this.refusedLogged = true;
    }
  }

  /** An own write is stored (or failed): once none is on its way, a held newer write of another applies. */
  private settle(key: string, own: { inFlight: number; revision: number; held?: { revision: number; write: SharedWrite } }): void {
    own.inFlight--;
    if (own.inFlight > 0) return;
    const held = own.held;
    delete own.held;
    if (held && held.revision > own.revision) this.apply(held.write);
  }
}
