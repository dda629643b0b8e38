// Who is in the cluster: every member publishes a heartbeat once a second on `<prefix>.hb` and
// keeps a KV entry (its ARI address and load); every member listens to the heartbeats and
// declares a member dead when none came for `cluster.failure_seconds`. While this node's own
// NATS connection is down it declares nobody dead: it cannot tell a dead member from its own cut.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';

export const HEARTBEAT_MS = 1000;
/** Members tracked at most: heartbeats beyond it (or malformed) are ignored. */
const MAX_MEMBERS = 256;

export interface MemberLoad {
  readonly channels: number;
  readonly bridges: number;
}

export interface Member {
  readonly node: string;
  /** Changes at each start of the node: a restarted node is a new instance. */
  readonly instance: string;
  /** Its server id: the asterisk_id of its events. */
  readonly asteriskId: string;
  readonly ari: string;
  readonly load: MemberLoad;
  /** performance.now() of the last heartbeat (this node: now). */
  readonly seenAt: number;
  readonly draining: boolean;
}

interface Heartbeat {
  readonly node: string;
  readonly instance: string;
  readonly asteriskId: string;
  readonly ari: string;
  readonly load: MemberLoad;
  readonly draining: boolean;
  /** The member's last heartbeat: it stops (a graceful stop once drained, or any orderly stop). */
  readonly leaving?: boolean;
}

export interface MembershipOptions {
  readonly nc: NatsConnection;
  readonly kv: KV;
  readonly prefix: string;
  readonly node: string;
  readonly instance: string;
  readonly asteriskId: string;
  readonly ari: string;
  readonly failureSeconds: number;
  readonly load: () => MemberLoad;
  readonly draining: () => boolean;
  readonly log: Logger;
  /** Told once when a member is declared dead (its heartbeats stopped). */
  readonly onDown: (member: Member) => void;
}

function parseHeartbeat(data: Uint8Array): Heartbeat | undefined {
  try {
    const h = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
    const load = h.load as Record<string, unknown> | null | undefined;
    if (typeof h.node !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(h.node)) return undefined;
    if (typeof h.instance !== 'string' || h.instance.length > 64) return undefined;
    if (typeof h.ari !== 'string' || h.ari.length > 512) return undefined;
    if (typeof h.asteriskId !== 'string' || h.asteriskId.length > 64) return undefined;
    if (!load || typeof load.channels !== 'number' || typeof load.bridges !== 'number') return undefined;
    return { node: h.node, instance: h.instance, asteriskId: h.asteriskId, ari: h.ari, load: { channels: load.channels, bridges: load.bridges }, draining: h.draining === true, ...(h.leaving === true ? { leaving: true } : {}) };
  } catch {
    return undefined;
  }
}

export class Membership {
  private readonly members = new Map<string, Member>();
  /**
   * Members that said they leave, by instance: out of placement and listings at once, but what
   * they held is ended (onDown) only after failure_seconds, as for a member that died, so that the
   * events they sent last (in the stream) reach the applications first.
   */
  private readonly leaving = new Map<string, { member: Member; at: number }>();
  private readonly options: MembershipOptions;
  private subscription: Subscription | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  /** Whether this node's NATS connection is up (set by the cluster from the connection's status). */
  private connected = true;
  private warnedDuplicate = false;

  constructor(options: MembershipOptions) {
    this.options = options;
  }

  start(): void {
    const { nc, prefix } = this.options;
    this.subscription = nc.subscribe(`${prefix}.hb`, { callback: (err, msg) => (err ? undefined : this.heard(msg.data)) });
    this.beat();
    this.beatTimer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.beatTimer.unref();
    // Judged after the loop's poll phase: timers run before I/O, so after a stall of this process
    // (a loaded machine) the heartbeats that came meanwhile still wait unread when the timer fires,
    // and a check then would declare live members dead. setImmediate runs once they are read.
    this.checkTimer = setInterval(() => setImmediate(() => this.checkTimer !== undefined && this.check()), 250);
    this.checkTimer.unref();
  }

  stop(): void {
    clearInterval(this.beatTimer);
    clearInterval(this.checkTimer);
    this.beatTimer = undefined;
    this.checkTimer = undefined;
    this.subscription?.unsubscribe();
    // The last heartbeat says so: the others take this member out at once instead of waiting for
    // its heartbeats to be missed (and logging a death).
    this.beat(true);
  }

  /** The connection went down or came back; on return every member gets a fresh grace period. */
  setConnected(up: boolean): void {
    if (up && !this.connected) {
      const now = performance.now();
      for (const [node, member] of this.members) this.members.set(node, { ...member, seenAt: now });
    }
    this.connected = up;
  }

  /** A heartbeat now, out of turn: this node's drain changed and the others should know at once. */
  announce(): void {
    if (this.beatTimer !== undefined) this.beat();
  }

  /** Live members, this node included, by node id. */
  list(): Member[] {
    return [...this.members.values(), this.self()].sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Live members other than this node. */
  others(): Member[] {
    return [...this.members.values()];
  }

  private self(): Member {
    const { node, instance, ari, asteriskId } = this.options;
    return { node, instance, asteriskId, ari, load: this.options.load(), seenAt: performance.now(), draining: this.options.draining() };
  }

  private beat(leaving = false): void {
    const { nc, kv, prefix, node, log } = this.options;
    const self = this.self();
    const beat: Heartbeat = { node: self.node, instance: self.instance, asteriskId: self.asteriskId, ari: self.ari, load: self.load, draining: self.draining, ...(leaving ? { leaving } : {}) };
    const data = JSON.stringify(beat);
    try {
      nc.publish(`${prefix}.hb`, data);
    } catch (err) {
      log.debug({ err }, 'cluster heartbeat not sent');
    }
    const written = leaving ? kv.delete(node) : kv.put(node, data);
    written.catch((err: unknown) => log.debug({ err }, 'cluster member entry not written'));
  }

  private heard(data: Uint8Array): void {
    const beat = parseHeartbeat(data);
    if (!beat) return;
    if (beat.node === this.options.node) {
      if (beat.instance !== this.options.instance && !this.warnedDuplicate) {
        this.warnedDuplicate = true;
        this.options.log.error({ duplicate: beat.node }, 'another cluster member uses this node id: set cluster.node_id (or server_id) apart on each node');
      }
      return;
    }
    if (beat.leaving) {
      const member = this.members.get(beat.node);
      if (!member || member.instance !== beat.instance || this.leaving.size >= MAX_MEMBERS) return;
      this.members.delete(beat.node);
      this.leaving.set(member.instance, { member, at: performance.now() });
      this.options.log.info({ left: beat.node, channels: beat.load.channels }, 'cluster member left');
      return;
    }
    if (this.leaving.has(beat.instance)) return; // a heartbeat overtaken by its leaving one
    if (!this.members.has(beat.node) && this.members.size >= MAX_MEMBERS) return;
    const known = this.members.get(beat.node);
    if (!known) this.options.log.info({ joined: beat.node, ari: beat.ari }, 'cluster member joined');
    else if (known.instance !== beat.instance) {
      // What the earlier instance held died with it, however quickly the node came back.
      this.options.log.warn({ restarted: beat.node }, 'cluster member restarted');
      this.options.onDown(known);
    }
    this.members.set(beat.node, { ...beat, seenAt: performance.now() });
  }

  private check(): void {
    if (!this.connected) return;
    const limit = performance.now() - this.options.failureSeconds * 1000;
    for (const [instance, { member, at }] of [...this.leaving]) {
      if (at >= limit) continue;
      this.leaving.delete(instance);
      this.options.onDown(member);
    }
    for (const member of [...this.members.values()]) {
      if (member.seenAt >= limit) continue;
      this.members.delete(member.node);
      this.options.log.error({ dead: member.node, failureSeconds: this.options.failureSeconds }, 'cluster member missed its heartbeats: declared dead');
      this.options.kv.delete(member.node).catch(() => undefined);
      this.options.onDown(member);
    }
  }
}
