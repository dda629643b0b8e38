// The order of several applications' relayed events on one WebSocket (docs/cluster.md, "Order
// across applications on one WebSocket"). Each application's relayed events reach its home through
// a stream consumer of its own, so two applications' events raised on one member in one order may
// be handed to their shared connection in another. The relay tags each event of an application
// that shares its home connection with others: the source (this member's process), a counter
// raised once per relayed event (the member's raise order), and, for each other application of the
// group, the counter of its last event published before this one. The home hands an event over
// only once the events it names have been handed over (or a bounded wait ran out), so that one
// connection sees one member's events in the order that member raised them; each application's
// own order, and its stream position for resuming, are untouched (events are only held, in order).
import { randomUUID } from 'node:crypto';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { parseJsonObjectText } from '../util/json-object.ts';

/** The NATS header carrying the tag. */
export const ORDER_HEADER = 'Pb-Order';
/** Applications of one connection whose mutual order is kept (a larger group is not ordered). */
export const MAX_ORDERED_GROUP = 16;
/** A tag longer than this is ignored (hostile or broken). */
const MAX_TAG_CHARS = 4096;
/** Sources (member processes) remembered by a home; the least recently heard is forgotten past it. */
const MAX_SOURCES = 256;

/** What a relayed event says about its place in its member's raise order. */
export interface OrderTag {
  /** The member process that raised it. */
  readonly source: string;
  /** Its place in that process's relayed events. */
  readonly counter: number;
  /** The home the relay believed the group's (citations are ignored by any other). */
  readonly home: string;
  /** Application → counter of its last event the source published before this one. */
  readonly after: ReadonlyMap<string, number>;
}

export function parseOrderTag(value: string | undefined): OrderTag | undefined {
  if (value === undefined || value.length === 0 || value.length > MAX_TAG_CHARS) return undefined;
  const parsed = parseJsonObjectText(value);
  if (typeof parsed === 'string') return undefined;
  const { s, n, h, a } = parsed;
  if (typeof s !== 'string' || s.length === 0 || s.length > 128) return undefined;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return undefined;
  if (typeof h !== 'string' || h.length > 256) return undefined;
  const after = new Map<string, number>();
  if (a !== undefined) {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) return undefined;
    const entries = Object.entries(a as Record<string, unknown>);
    if (entries.length > MAX_ORDERED_GROUP) return undefined;
    for (const [application, counter] of entries) {
      if (typeof counter !== 'number' || !Number.isSafeInteger(counter) || counter < 1 || counter >= n) return undefined;
      after.set(application, counter);
    }
  }
  return { source: s, counter: n, home: h, after };
}

/** A group announced for an application in the apps bucket: its home and the applications of its connection. */
export interface AnnouncedGroup {
  readonly home: string;
  readonly group: readonly string[];
}

/** The relay's side: tags each published event of an application that shares a connection. */
export class RelayOrder {
  private readonly source = randomUUID();
  private counter = 0;
  private readonly groups = new Map<string, AnnouncedGroup>();
  /** Application → counter of its last tagged event, counted since its current announcement. */
  private readonly lastPublished = new Map<string, number>();

  /** The apps bucket names the application's home and group (none: its events are not tagged). */
  announced(application: string, group: AnnouncedGroup | undefined): void {
    // A new announcement may come with a new consumer at the home, which never sees the events
    // published before it: they are not cited, or the home would wait for them in vain.
    this.lastPublished.delete(application);
    if (group === undefined || group.group.length < 2) this.groups.delete(application);
    else this.groups.set(application, group);
  }

  /** The applications whose entry `matches` (the bucket's key of a withdrawn one) are forgotten. */
  withdrawn(matches: (application: string) => boolean): void {
    for (const application of this.groups.keys()) if (matches(application)) this.groups.delete(application);
    for (const application of this.lastPublished.keys()) if (matches(application)) this.lastPublished.delete(application);
  }

  /** The headers to publish the application's next event with, or undefined when it is not grouped. */
  tag(application: string): MsgHdrs | undefined {
    const mine = this.groups.get(application);
    if (mine === undefined) return undefined;
    const counter = ++this.counter;
    // No prototype: an application may be named `__proto__` (ARI allows any name), and cited as such.
    const after: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const other of mine.group) {
      if (other === application) continue;
      const theirs = this.groups.get(other);
      // Only an application announced with the same home and group: the home orders them together.
      if (theirs === undefined || theirs.home !== mine.home || !theirs.group.includes(application)) continue;
      const last = this.lastPublished.get(other);
      if (last !== undefined) after[other] = last;
    }
    this.lastPublished.set(application, counter);
    const tagged = headers();
    tagged.set(ORDER_HEADER, JSON.stringify({ s: this.source, n: counter, h: mine.home, a: after }));
    return tagged;
  }
}

/** One relayed event waiting for its turn at the home. */
export interface Relayed {
  readonly data: Uint8Array;
  /** Its stream position. */
  readonly seq: number;
  readonly tag: OrderTag | undefined;
}

interface HeldEvent {
  readonly event: Relayed;
  /** performance.now() after which it goes whatever it waits for. */
  readonly until: number;
}

export interface OrderedDeliveryOptions {
  /** This member's node: only citations made for this home are waited for. */
  readonly node: string;
  /** The other applications of the application's connection here (as announced). */
  readonly groupOf: (application: string) => readonly string[];
  /** Hands one event to the application (in each application's stream order). */
  readonly deliver: (application: string, event: Relayed) => void;
  /** Longest an event is held for one it names (a message lost, a consumer restarted). */
  readonly maxHoldMs: number;
  /** Most events held at once; past it the oldest goes whatever it waits for. */
  readonly maxHeld: number;
}

/** The home's side: hands relayed events over in their source's order across a connection's applications. */
export class OrderedDelivery {
  /** Source → application → counter of the last event handed over. */
  private readonly delivered = new Map<string, Map<string, number>>();
  private readonly held = new Map<string, HeldEvent[]>();
  private heldCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly options: OrderedDeliveryOptions;
  /** Events that waited, and those that went when their wait ran out (metrics, tests). */
  heldTotal = 0;
  expired = 0;

  constructor(options: OrderedDeliveryOptions) {
    this.options = options;
  }

  /** An event from the application's consumer: handed over now, or held behind what it names. */
  offer(application: string, event: Relayed): void {
    const queue = this.held.get(application);
    if (queue === undefined && this.ready(application, event)) {
      this.handOver(application, event);
      if (this.heldCount > 0) this.drain(false);
      return;
    }
    this.heldTotal++;
    const entry: HeldEvent = { event, until: performance.now() + this.options.maxHoldMs };
    if (queue) queue.push(entry);
    else this.held.set(application, [entry]);
    this.heldCount++;
    if (this.heldCount > this.options.maxHeld) this.drain(true);
    this.schedule();
  }

  /** Hands over every held event of the application, in order (it stops being a home here). */
  flush(application: string): void {
    const queue = this.held.get(application);
    if (queue === undefined) return;
    this.held.delete(application);
    this.heldCount -= queue.length;
    for (const entry of queue) this.handOver(application, entry.event);
    this.drain(false);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held.clear();
    this.heldCount = 0;
  }

  get holding(): number {
    return this.heldCount;
  }

  private ready(application: string, event: Relayed): boolean {
    const tag = event.tag;
    if (tag === undefined || tag.home !== this.options.node || tag.after.size === 0) return true;
    const delivered = this.delivered.get(tag.source);
    const group = this.options.groupOf(application);
    for (const [other, counter] of tag.after) {
      if (!group.includes(other)) continue;
      if ((delivered?.get(other) ?? 0) < counter) return false;
    }
    return true;
  }

  private handOver(application: string, event: Relayed): void {
    const tag = event.tag;
    if (tag !== undefined) {
      let delivered = this.delivered.get(tag.source);
      if (delivered === undefined) {
        if (this.delivered.size >= MAX_SOURCES) this.delivered.delete(this.delivered.keys().next().value!);
        delivered = new Map();
      } else this.delivered.delete(tag.source);
      // Re-inserted: the map's order is the order sources were last heard (the oldest goes first).
      this.delivered.set(tag.source, delivered);
      if ((delivered.get(application) ?? 0) < tag.counter) delivered.set(application, tag.counter);
    }
    this.options.deliver(application, event);
  }

  /**
   * Hands over, queue by queue, each head that is ready (or whose wait ran out; with `overflow`, the
   * oldest head too), until nothing moves: one handed over may let another queue's head go.
   */
  private drain(overflow: boolean): void {
    let forceOldest = overflow;
    for (let moved = true; moved && this.heldCount > 0; ) {
      moved = false;
      const now = performance.now();
      let oldest: string | undefined;
      let oldestUntil = Infinity;
      for (const [application, queue] of this.held) {
        while (queue.length > 0 && (queue[0]!.until <= now || this.ready(application, queue[0]!.event))) {
          const entry = queue.shift()!;
          this.heldCount--;
          if (entry.until <= now) this.expired++;
          this.handOver(application, entry.event);
          moved = true;
        }
        if (queue.length === 0) this.held.delete(application);
        else if (queue[0]!.until < oldestUntil) {
          oldestUntil = queue[0]!.until;
          oldest = application;
        }
      }
      if (!moved && forceOldest && oldest !== undefined && this.heldCount > this.options.maxHeld) {
        const queue = this.held.get(oldest)!;
        this.heldCount--;
        this.expired++;
        this.handOver(oldest, queue.shift()!.event);
        if (queue.length === 0) this.held.delete(oldest);
        moved = true;
      }
      if (this.heldCount <= this.options.maxHeld) forceOldest = false;
    }
  }

  /** A timer for the earliest wait to run out, while anything is held. */
  private schedule(): void {
    if (this.timer !== undefined || this.heldCount === 0) return;
    let earliest = Infinity;
    for (const queue of this.held.values()) if (queue.length > 0 && queue[0]!.until < earliest) earliest = queue[0]!.until;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain(false);
      this.schedule();
    }, Math.max(1, earliest - performance.now()));
    this.timer.unref();
  }
}
