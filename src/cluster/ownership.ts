// The resources this member holds, made reachable from every member: one NATS subscription per
// channel and bridge (`<prefix>.own.<kind>.<id>`), taken when the core raises its Created event
// and dropped with its Destroyed one, so a request for an id nobody holds is answered "no
// responders" by NATS at once. Playbacks and live recordings are short-lived and may be asked
// for before their Started event: a request for one goes to every member's node subject
// (`<prefix>.node.<node>.ari`) with the resource named, and only its holder serves it.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { AriUser } from '../config/config.ts';
import type { Core } from '../control/core.ts';
import type { CoreEvent } from '../spec/events.ts';
import { decodeRequest, encodeResponse, NOT_OWNER_HEADER, SERVED_BY_HEADER, subjectToken, type ClusterAriRequest, type ClusterAriResponse, type OwnedResource, type ResourceKind, type WireRequest } from './wire.ts';

/** Largest binary answer carried back (NATS's default max_payload is 1 MiB; base64 adds a third). */
const MAX_RAW_BYTES = 700 * 1024;

export interface LocalAri {
  /** Runs a request through this server's own ARI dispatch (validation, rights, errors). */
  dispatch(request: ClusterAriRequest): ClusterAriResponse | Promise<ClusterAriResponse>;
  /** The ARI user of that name here, for the rights of a forwarded request. */
  userNamed(name: string): AriUser | undefined;
}

export interface OwnershipOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  readonly core: Core;
  readonly ari: LocalAri;
  readonly log: Logger;
}

export function ownerSubject(prefix: string, kind: ResourceKind, id: string): string {
  return `${prefix}.own.${kind}.${subjectToken(id)}`;
}

export function nodeSubject(prefix: string, node: string): string {
  return `${prefix}.node.${node}.ari`;
}

export class Ownership {
  private readonly subscriptions = new Map<string, Subscription>();
  private nodeSubscription: Subscription | undefined;
  private stopObserving: (() => void) | undefined;

  constructor(private readonly options: OwnershipOptions) {}

  start(): void {
    const { core, nc, prefix, node } = this.options;
    this.nodeSubscription = nc.subscribe(nodeSubject(prefix, node), { callback: (err, msg) => (err ? undefined : this.serve(msg)) });
    // What exists already (the cluster starts after the core) and what comes.
    for (const channel of core.channels.list()) this.own('channel', channel.id);
    for (const bridge of core.bridges.listShown()) this.own('bridge', bridge.id);
    this.stopObserving = core.applications.observe((event) => this.observed(event));
  }

  stop(): void {
    this.stopObserving?.();
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
    this.nodeSubscription?.unsubscribe();
  }

  /** Whether this member holds the resource now. */
  holds(kind: ResourceKind, id: string): boolean {
    const { core } = this.options;
    switch (kind) {
      case 'channel':
        return core.channels.get(id)?.id === id;
      case 'bridge':
        // A basic bridge (Dial()'s) too: its operations are answered here (409), as Asterisk does.
        return core.bridges.shown(id) !== undefined;
      case 'playback':
        return core.playbacks.get(id) !== undefined;
      case 'recording':
        return core.recordings.list().some((recording) => recording.name === id);
    }
  }

  /** Whether a request asked of every member is this member's to serve: a channel by its id or its name. */
  private answersFor(owned: OwnedResource): boolean {
    if (owned.kind === 'channel') return this.options.core.channels.get(owned.id) !== undefined;
    return this.holds(owned.kind, owned.id);
  }

  get owned(): number {
    return this.subscriptions.size;
  }

  private observed(event: CoreEvent): void {
    switch (event.type) {
      case 'ChannelCreated':
        return this.own('channel', event.channel.id);
      case 'ChannelDestroyed':
        return this.disown('channel', event.channel.id);
      case 'BridgeCreated':
        return this.own('bridge', event.bridge.id);
      case 'BridgeDestroyed':
        return this.disown('bridge', event.bridge.id);
    }
  }

  private own(kind: ResourceKind, id: string): void {
    const subject = ownerSubject(this.options.prefix, kind, id);
    if (this.subscriptions.has(subject)) return;
    const subscription = this.options.nc.subscribe(subject, { callback: (err, msg) => (err ? undefined : this.serve(msg)) });
    this.subscriptions.set(subject, subscription);
  }

  private disown(kind: ResourceKind, id: string): void {
    const subject = ownerSubject(this.options.prefix, kind, id);
    this.subscriptions.get(subject)?.unsubscribe();
    this.subscriptions.delete(subject);
  }

  /** Answers a forwarded request: every failure is an answer, never a throw. */
  private serve(msg: Msg): void {
    const wire = decodeRequest(msg.data);
    if (typeof wire === 'string') return this.reply(msg, { status: 400, headers: {}, json: { message: `Malformed cluster request: ${wire}` } });
    if (wire.owned && !this.answersFor(wire.owned)) return this.reply(msg, { status: 404, headers: { [NOT_OWNER_HEADER]: '1' }, json: { message: 'Resource not found' } });
    const user = this.options.ari.userNamed(wire.user);
    // The user is unknown here: the members' ari.users differ, and no right is assumed.
    if (!user) return this.reply(msg, { status: 403, headers: {}, json: { message: `ARI user '${wire.user}' is not known on cluster member ${this.options.node}` } });
    let answer: ClusterAriResponse | Promise<ClusterAriResponse>;
    try {
      answer = this.options.ari.dispatch(toRequest(wire, user));
    } catch (err) {
      this.options.log.error({ err }, 'forwarded request failed');
      return this.reply(msg, { status: 500, headers: {}, json: { message: 'Internal server error' } });
    }
    Promise.resolve(answer).then(
      (response) => this.replyWith(msg, response),
      (err: unknown) => {
        this.options.log.error({ err }, 'forwarded request failed');
        this.reply(msg, { status: 500, headers: {}, json: { message: 'Internal server error' } });
      },
    );
  }

  private replyWith(msg: Msg, response: ClusterAriResponse): void {
    const { status, json, raw, contentType } = response;
    // Which member served it: for the client's information, and for the bridge check (forwarder.ts).
    const headers = { ...response.headers, [SERVED_BY_HEADER]: this.options.node };
    if (raw === undefined) return this.reply(msg, { status, headers, ...(json !== undefined ? { json } : {}) });
    collect(raw, MAX_RAW_BYTES).then(
      (bytes) => this.reply(msg, { status, headers, raw: bytes.toString('base64'), ...(contentType ? { contentType } : {}) }),
      () => this.reply(msg, { status: 501, headers: {}, json: { message: `A binary answer over ${MAX_RAW_BYTES} bytes cannot be forwarded between cluster members` } }),
    );
  }

  private reply(msg: Msg, response: Parameters<typeof encodeResponse>[0]): void {
    try {
      msg.respond(encodeResponse(response));
    } catch (err) {
      this.options.log.warn({ err }, 'answer to a forwarded request not sent');
    }
  }
}

function toRequest(wire: WireRequest, user: AriUser): ClusterAriRequest {
  return {
    method: wire.method,
    path: wire.path,
    query: new URLSearchParams(wire.query),
    ...(wire.contentType !== undefined ? { contentType: wire.contentType } : {}),
    ...(wire.body !== undefined ? { body: Buffer.from(wire.body, 'base64') } : {}),
    user,
    ...(wire.origin !== undefined ? { origin: wire.origin } : {}),
    transport: wire.transport,
    forwarded: true,
  };
}

function collect(raw: Buffer | NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  if (Buffer.isBuffer(raw)) return raw.length > limit ? Promise.reject(new Error('too large')) : Promise.resolve(raw);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    raw.on('data', (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        reject(new Error('too large'));
        return;
      }
      chunks.push(bytes);
    });
    raw.on('end', () => resolve(Buffer.concat(chunks)));
    raw.on('error', reject);
  });
}

export type { OwnedResource };
