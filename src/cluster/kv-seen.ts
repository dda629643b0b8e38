// Read-your-writes for the dynamic configuration and the ARI/`Custom:` device states across
// members (docs/cluster.md, "Endpoints and device states"). The buckets are mirrored without
// waiting (shared-state.ts): a client that wrote through member B and then reads through A (or
// through B, whose endpoint view asks A too) could see A's old value until A's watcher catches up.
// So an ARI write of either is answered only once it is stored in its bucket and every other live
// member says its watcher has processed that revision (`<prefix>.node.<node>.kv-seen`), within a
// bound; a member that does not confirm in time is not waited for further, and said once.
import type { NatsConnection, Subscription, Msg } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Member } from './membership.ts';
import type { SharedStateMirror } from './shared-state.ts';
import type { ClusterAriResponse } from './wire.ts';
import { parseJsonObject } from '../util/json-object.ts';

/** The whole wait of one write: stored, then confirmed by every other member (or given up on). */
export const READ_YOUR_WRITES_MS = 2000;
/** A kv-seen request is a few dozen bytes: anything larger is refused unread. */
const MAX_REQUEST_BYTES = 256;
/** kv-seen requests waiting at once on one member at most (each holds a timer): beyond, refused. */
const MAX_WAITING = 1000;

/** The buckets a kv-seen request may name. */
export type SeenBucket = 'config' | 'devstates';

/** The ARI writes whose answer waits, and the bucket each writes to. */
const WRITES: Readonly<Record<string, SeenBucket>> = {
  'asterisk.updateObject': 'config',
  'asterisk.deleteObject': 'config',
  'deviceStates.update': 'devstates',
  'deviceStates.delete': 'devstates',
};

export function kvSeenSubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.kv-seen`;
}

/** A kv-seen request, checked: a string saying what is wrong with it otherwise. */
export function parseSeenRequest(data: Uint8Array): { bucket: SeenBucket; revision: number; waitMs?: number } | string {
  if (data.length > MAX_REQUEST_BYTES) return 'request too large';
  const parsed = parseJsonObject(data);
  if (typeof parsed === 'string') return parsed;
  const { bucket, revision, waitMs } = parsed;
  if (bucket !== 'config' && bucket !== 'devstates') return 'unknown bucket';
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1) return 'revision must be a positive integer';
  if (waitMs === undefined) return { bucket, revision };
  if (typeof waitMs !== 'number' || !Number.isSafeInteger(waitMs) || waitMs < 0) return 'waitMs must be a non-negative integer';
  return { bucket, revision, waitMs };
}

/** The answer to a kv-seen request: the revision processed, or why the request was refused. */
export type SeenReply = { readonly seen: number; readonly reached: boolean } | { readonly error: string };

export interface KvSeenOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  readonly mirrors: Readonly<Record<SeenBucket, SharedStateMirror>>;
  /** The live members other than this one (membership.ts). */
  readonly others: () => readonly Member[];
  readonly log: Logger;
  /** The bound of one write's wait (tests shorten it); READ_YOUR_WRITES_MS by default. */
  readonly boundMs?: number;
}

export class KvSeen {
  private subscription: Subscription | undefined;
  /** Members (by instance) that did not confirm in time: said once, until they confirm again. */
  private readonly lagging = new Set<string>();
  /** Writes that waited for the other members, and members given up on for one (/admin/cluster). */
  waited = 0;
  unconfirmed = 0;

  constructor(private readonly options: KvSeenOptions) {}

  start(): void {
    const { nc, prefix, node } = this.options;
    this.subscription = nc.subscribe(kvSeenSubject(prefix, node), { callback: (err, msg) => (err ? undefined : void this.answer(msg)) });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  /** The bucket an ARI operation writes to, when its answer must wait for the other members. */
  static bucketOf(operation: string): SeenBucket | undefined {
    return WRITES[operation];
  }

  /**
   * The answer of a write, once the other members have what it wrote (or the bound passed). A
   * failed write (not 2xx) changed nothing: answered at once.
   */
  async settled(bucket: SeenBucket, answer: ClusterAriResponse): Promise<ClusterAriResponse> {
    if (answer.status < 200 || answer.status > 299) return answer;
    const bound = this.options.boundMs ?? READ_YOUR_WRITES_MS;
    const deadline = performance.now() + bound;
    // A put that does not come back in time (NATS slow or gone): the answer goes without it.
    const revision = await withTimeout(this.options.mirrors[bucket].ownWritesStored(), bound);
    if (revision === undefined || revision === 0) return answer;
    this.waited++;
    await Promise.all(this.options.others().map((member) => this.confirm(member, bucket, revision, deadline - performance.now())));
    return answer;
  }

  private async confirm(member: Member, bucket: SeenBucket, revision: number, remainingMs: number): Promise<void> {
    const { nc, prefix, log } = this.options;
    let reached = false;
    if (remainingMs > 0) {
      try {
        // The member waits up to the remaining time itself; the request allows a little more for the trip back.
        const reply = await nc.request(kvSeenSubject(prefix, member.node), JSON.stringify({ bucket, revision, waitMs: Math.ceil(remainingMs) }), { timeout: Math.ceil(remainingMs) + 100 });
        const answer = parseSeenReply(reply.data);
        reached = answer !== undefined && 'seen' in answer && answer.seen >= revision;
      } catch {
        // Timed out, or no responder (a member without kv-seen): not confirmed.
      }
    }
    if (reached) {
      this.lagging.delete(member.instance);
      return;
    }
    this.unconfirmed++;
    if (this.lagging.has(member.instance)) return;
    // Restarted members come as new instances: the set stays bounded (at worst, one more log line).
    if (this.lagging.size >= 256) this.lagging.clear();
    this.lagging.add(member.instance);
    log.warn({ member: member.node, bucket, revision }, 'cluster member did not confirm a configuration/device state write in time: answered without it; a read through it may show the old value until its watcher catches up');
  }

  /** A kv-seen request: answered when this member's watcher has processed the revision, or at the wait's end. */
  private async answer(msg: Msg): Promise<void> {
    const request = parseSeenRequest(msg.data);
    const reply = (answer: SeenReply): void => {
      try {
        msg.respond(JSON.stringify(answer));
      } catch {
        // The connection is closing: nobody to tell.
      }
    };
    if (typeof request === 'string') return reply({ error: request });
    const mirror = this.options.mirrors[request.bucket];
    if (mirror.waiting >= MAX_WAITING) return reply({ error: 'too many waiting requests' });
    // Never longer than this member's own bound, whatever the request asks.
    const waitMs = Math.min(request.waitMs ?? Infinity, this.options.boundMs ?? READ_YOUR_WRITES_MS);
    const reached = await mirror.waitSeen(request.revision, waitMs);
    reply({ seen: mirror.seenRevision, reached });
  }
}

function parseSeenReply(data: Uint8Array): SeenReply | undefined {
  if (data.length > MAX_REQUEST_BYTES) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown> | null;
    if (parsed === null || typeof parsed !== 'object') return undefined;
    if (typeof parsed.seen === 'number' && Number.isSafeInteger(parsed.seen)) return { seen: parsed.seen, reached: parsed.reached === true };
    if (typeof parsed.error === 'string') return { error: parsed.error.slice(0, 200) };
  } catch {
    // Not JSON: not a confirmation.
  }
  return undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
