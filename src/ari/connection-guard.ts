// Bounds the HTTP connections one server holds, so that idle sockets opened by anyone cannot use up
// the process's file descriptors (ARI, recordings and SIP all need them): a total cap, a cap per
// client address, and a short deadline for a connection to send its first request header.
import type { Socket } from 'node:net';
import net from 'node:net';

export interface ConnectionLimits {
  /** Connections at once, all clients together. */
  readonly maxConnections: number;
  /** Connections at once from one address (one /64 for IPv6: a host gets a whole /64 for free). */
  readonly maxPerAddress: number;
  /** Milliseconds a new connection has to deliver its first request header. */
  readonly headerTimeoutMs: number;
}

/** What the guard did, for the log and the metrics. */
export type ConnectionRefusal = 'total' | 'per-address';

/** A connection the guard counts. `headerReceived` hands it back, so a request sets its flags without a second lookup. */
export interface TrackedConnection {
  readonly key: string;
  /** The client's address as the socket gave it when admitted (a request asks for it to authenticate). */
  readonly address: string | undefined;
  /** Set once a request on it was authenticated: such a connection is never evicted for a newcomer. */
  authenticated: boolean;
  headerTimer: NodeJS.Timeout | undefined;
}

/** The key connections are counted under: the address, or the /64 of an IPv6 address. */
export function addressKey(address: string | undefined): string {
  if (address === undefined) return '?';
  if (address.startsWith('::ffff:') && net.isIPv4(address.slice(7))) return address.slice(7);
  if (!net.isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back] : front;
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}

export class ConnectionGuard {
  private readonly limits: ConnectionLimits;
  /** In acceptance order: the first unauthenticated one is the oldest, evicted first. */
  private readonly open = new Map<Socket, TrackedConnection>();
  private readonly perAddress = new Map<string, number>();
  private readonly onRefuse: (reason: ConnectionRefusal, address: string | undefined) => void;

  constructor(limits: ConnectionLimits, onRefuse: (reason: ConnectionRefusal, address: string | undefined) => void) {
    this.limits = limits;
    this.onRefuse = onRefuse;
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * A new connection: refused (destroyed) past the per-address cap; at the total cap the oldest
   * connection that never authenticated makes room, so that a flood of idle sockets cannot lock out
   * a client with credentials; refused when every connection is authenticated.
   */
  admit(socket: Socket): void {
    const address = socket.remoteAddress;
    const key = addressKey(address);
    const fromAddress = this.perAddress.get(key) ?? 0;
    if (fromAddress >= this.limits.maxPerAddress) return this.refuse(socket, 'per-address');
    if (this.open.size >= this.limits.maxConnections && !this.evictOldestUnauthenticated()) return this.refuse(socket, 'total');
    const tracked: TrackedConnection = { key, address, authenticated: false, headerTimer: undefined };
    tracked.headerTimer = setTimeout(() => socket.destroy(), this.limits.headerTimeoutMs);
    tracked.headerTimer.unref();
    this.open.set(socket, tracked);
    this.perAddress.set(key, fromAddress + 1);
    socket.once('close', () => this.forget(socket));
  }

  /**
   * A request header arrived: the header deadline no longer applies. Returns the connection's record
   * (undefined when the guard does not count it) for `markAuthenticated`: a ping looked its socket up
   * twice in this map, a hash-table probe each (docs/performance.md, issue 25, fifth pass on ping).
   */
  headerReceived(socket: Socket): TrackedConnection | undefined {
    const tracked = this.open.get(socket);
    if (tracked?.headerTimer) {
      clearTimeout(tracked.headerTimer);
      tracked.headerTimer = undefined;
    }
    return tracked;
  }

  /** A request on it carried valid credentials. */
  authenticated(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (tracked) tracked.authenticated = true;
  }

  /** `authenticated()` for a record `headerReceived` returned (a forgotten one changes nothing). */
  static markAuthenticated(tracked: TrackedConnection | undefined): void {
    if (tracked !== undefined) tracked.authenticated = true;
  }

  private evictOldestUnauthenticated(): boolean {
    for (const [socket, tracked] of this.open) {
      if (tracked.authenticated) continue;
      this.forget(socket);
      socket.destroy();
      return true;
    }
    return false;
  }

  private refuse(socket: Socket, reason: ConnectionRefusal): void {
    this.onRefuse(reason, socket.remoteAddress);
    socket.on('error', () => {});
    socket.destroy();
  }

  private forget(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (!tracked) return;
    this.open.delete(socket);
    if (tracked.headerTimer) clearTimeout(tracked.headerTimer);
    const left = (this.perAddress.get(tracked.key) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(tracked.key);
    else this.perAddress.set(tracked.key, left);
  }
}
