// Which requests go to another member, and how: a request naming a channel or bridge this member
// does not hold goes to its owner's subject (NATS answers "no responders" at once when nobody
// holds it: then it is served here, which answers 404 as a single server does, or creates it);
// a playback or live recording is asked of every member, and its holder answers; a listing is
// gathered from every live member and merged; a broadcast claim goes to the channel's owner. Implements ari/forwarding.ts's RequestForwarder.
import { errors, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Membership } from './membership.ts';
import { combinerFor } from './merged-views.ts';
import { listedChannels, type CrossMemberBridges } from './bridge-routing.ts';
import { nodeSubject, ownerSubject, type Ownership } from './ownership.ts';
import type { CrossMemberVideoSource } from './video-source.ts';
import type { DialIdentity } from './dial-identity.ts';
import { firstHolder } from './first-holder.ts';
import { KvSeen } from './kv-seen.ts';
import { RECORD_OPERATIONS, refuseNameRecordedElsewhere, type LiveNameRouting } from './live-recording-names.ts';
import { routeStoredRecording, STORED_RECORDING_OPERATIONS, type StoredRecordingRouting } from './stored-recordings.ts';
import { mergeApplicationLists, mergeApplications, routeSubscription, routeUserEvent, type SubscriptionRouting } from './subscriptions.ts';
import { decodeResponse, encodeRequest, SERVED_BY_HEADER, type ClusterAriRequest, type ClusterAriResponse, type OwnedResource, type ResourceKind } from './wire.ts';

/** The routed operation, as ari/router.ts's RouteTarget gives it. */
export interface ForwardTarget {
  readonly resource: { readonly name: string };
  readonly operation: { readonly nickname: string };
}

/** How each listing's items from several members are merged: the key that makes two the same. */
const LISTINGS: Readonly<Record<string, (item: Record<string, unknown>) => string>> = {
  'channels.list': (item) => String(item.id),
  'bridges.list': (item) => String(item.id),
  'recordings.listStored': (item) => String(item.name),
};

/** Operations that make a channel: placed on the least loaded member unless the client names an id. */
const PLACED: ReadonlySet<string> = new Set(['channels.originate', 'channels.create']);
/** The query parameter naming the member a new channel is made on (`cluster_node=<node id>`). */
export const PLACEMENT_HINT = 'cluster_node';

export interface ForwarderOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly ownership: Ownership;
  readonly membership: Membership;
  readonly node: string;
  readonly requestTimeoutMs: number;
  readonly log: Logger;
  /** `cluster.placement`: fewest channels first (default), or each live member in turn. */
  readonly placement?: 'least_loaded' | 'round_robin';
  /** `cluster.place_on_self`: false keeps this member's placed channels on the others (an ARI front). */
  readonly placeOnSelf?: boolean;
}

export class ClusterForwarder {
  /** Whether the NATS connection is up (the cluster sets it from the connection's status). */
  connected = true;
  /** Requests sent to another member, and listings gathered (metrics, bench). */
  forwarded = 0;
  gathered = 0;
  /** The next turn of round-robin placement. */
  private turn = 0;
  /** Bridges across members (the cluster sets it): an addChannel or removeChannel naming another member's channel goes there. */
  crossBridges: CrossMemberBridges | undefined;
  /** setVideoSource naming another member's channel in a bridge here (the cluster sets it). */
  videoSources: CrossMemberVideoSource | undefined;
  /** dial with a caller on another member than the dialled channel (the cluster sets it). */
  dialIdentity: DialIdentity | undefined;
  /** Dynamic configuration and device state writes answered once the other members have them (the cluster sets it). */
  readYourWrites: KvSeen | undefined;

  constructor(private readonly options: ForwarderOptions) {}

  forward(request: ClusterAriRequest, target: ForwardTarget, pathParams: Readonly<Record<string, string>>): Promise<ClusterAriResponse> | undefined {
    const operation = `${target.resource.name}.${target.operation.nickname}`;
    if (!this.connected) return this.whileCut(request, pathParams);
    const sharedBucket = KvSeen.bucketOf(operation);
    if (sharedBucket && this.readYourWrites && this.options.membership.others().length > 0) {
      const readYourWrites = this.readYourWrites;
      return this.local(request).then((answer) => readYourWrites.settled(sharedBucket, answer));
    }
    // Endpoints and technology device states: every member has a part (merged-views.ts).
    const combine = combinerFor(operation, pathParams);
    if (combine) return this.options.membership.others().length === 0 ? undefined : this.askAll(request).then(([own, remote]) => combine(own, remote));
    const merge = LISTINGS[operation];
    if (merge) return this.options.membership.others().length === 0 ? undefined : this.gather(request, merge);
    // A client-chosen id is the channelId, or else the otherChannelId of a Local pair.
    if (PLACED.has(operation)) return this.place(request, request.query.get('channelId') ?? request.query.get('otherChannelId') ?? undefined);
    if (operation === 'channels.originateWithId' && this.options.placeOnSelf === false && pathParams.channelId !== undefined) return this.place(request, pathParams.channelId);
    if (STORED_RECORDING_OPERATIONS.has(operation)) return this.options.membership.others().length === 0 ? undefined : routeStoredRecording(request, this.storedRecordingRouting);
    // An application's channels and bridges are subscribed where they live (its relays): shown together.
    if ((operation === 'applications.get' || operation === 'applications.list') && this.options.membership.others().length > 0) return this.gatherApplications(request, operation === 'applications.list');
    if (operation === 'events.userEvent') return routeUserEvent(request, this.subscriptionRouting);
    if (operation === 'applications.subscribe' || operation === 'applications.unsubscribe') return routeSubscription(request, this.subscriptionRouting);
    if (operation === 'bridges.addChannel' && pathParams.bridgeId !== undefined) return this.addToBridge(request, pathParams.bridgeId);
    if (operation === 'bridges.removeChannel' && pathParams.bridgeId !== undefined && this.crossBridges) return this.removeFromBridge(request, pathParams.bridgeId, this.crossBridges);
    if (operation === 'bridges.setVideoSource' && pathParams.bridgeId !== undefined && pathParams.channelId !== undefined && this.videoSources && this.options.ownership.holds('bridge', pathParams.bridgeId) && !this.options.ownership.holds('channel', pathParams.channelId)) {
      return this.setVideoSource(request, pathParams.bridgeId, pathParams.channelId, this.videoSources);
    }
    const caller = request.query.get('caller');
    if (operation === 'channels.dial' && pathParams.channelId !== undefined && caller !== null && caller !== '' && this.dialIdentity && !(this.options.ownership.holds('channel', caller) && this.options.ownership.holds('channel', pathParams.channelId))) {
      return this.dialWithRemoteCaller(request, pathParams.channelId, caller, this.dialIdentity);
    }
    // A claim of a broadcast channel (StasisBroadcast) is decided by the member holding the channel:
    // the first claim to reach it wins, whichever member it was made on; the rest answer 409 there.
    if (operation === 'events.claimChannel') return this.claim(request);
    // A live recording's name is unique in the cluster as on one server (live-recording-names.ts).
    if (RECORD_OPERATIONS.has(operation) && this.options.membership.others().length > 0) return this.recordUnderFreeName(request, pathParams);
    const owned = resourceOf(request.path, pathParams);
    if (!owned || this.options.ownership.holds(owned.kind, owned.id)) return undefined;
    if (owned.kind === 'channel' || owned.kind === 'bridge') return this.toOwner(request, owned);
    return this.options.membership.others().length === 0 ? undefined : this.askEveryone(request, owned);
  }

  /** A record request, once no other member records under its name: served by the channel's or bridge's member. */
  private async recordUnderFreeName(request: ClusterAriRequest, pathParams: Readonly<Record<string, string>>): Promise<ClusterAriResponse> {
    const refused = await refuseNameRecordedElsewhere(request, this.liveNameRouting);
    if (refused) return refused;
    const owned = resourceOf(request.path, pathParams);
    if (!owned || this.options.ownership.holds(owned.kind, owned.id)) return this.local(request);
    return this.toOwner(request, owned);
  }

  /** How the other members are asked for a live recording of a name (live-recording-names.ts). */
  private readonly liveNameRouting: LiveNameRouting = { findHolder: (request, owned, timeoutMs) => this.findHolder(request, owned, Math.min(timeoutMs, this.options.requestTimeoutMs)) };

  /**
   * Cut off from NATS: what is here is served here (listings show this member's objects only), and
   * a request for another member's resource answers 503 at once instead of waiting out a timeout.
   */
  private whileCut(request: ClusterAriRequest, pathParams: Readonly<Record<string, string>>): Promise<ClusterAriResponse> | undefined {
    const owned = resourceOf(request.path, pathParams);
    if (!owned || this.options.ownership.holds(owned.kind, owned.id)) return undefined;
    return Promise.resolve({ status: 503, headers: {}, json: { message: 'The cluster is unreachable (NATS connection lost): only this member\'s resources are served' } });
  }

  /** The owner's answer; undefined-like fallback (served here) when nobody owns the resource. */
  private async toOwner(request: ClusterAriRequest, owned: OwnedResource): Promise<ClusterAriResponse> {
    const { nc, prefix, requestTimeoutMs } = this.options;
    this.forwarded++;
    try {
      const reply = await nc.request(ownerSubject(prefix, owned.kind, owned.id), encodeRequest(request), { timeout: requestTimeoutMs });
      return decodeResponse(reply.data);
    } catch (err) {
      // Asterisk's ARI finds a channel by its name too, and names have no subject (each member
      // numbers its own): a name nobody owns as an id is asked of every member, as a playback is.
      if (isNoResponders(err) && owned.kind === 'channel' && looksLikeChannelName(owned.id) && this.options.membership.others().length > 0) return this.askEveryone(request, owned);
      return this.failed(err, request);
    }
  }

  private claim(request: ClusterAriRequest): Promise<ClusterAriResponse> | undefined {
    const channelId = request.query.get('channelId');
    if (channelId === null || channelId === '' || this.options.ownership.holds('channel', channelId)) return undefined;
    return this.toOwner(request, { kind: 'channel', id: channelId });
  }

  /** How a subscription to another member's channel or bridge reaches its owner (subscriptions.ts). */
  private readonly subscriptionRouting: SubscriptionRouting = {
    holds: (kind, id) => this.options.ownership.holds(kind, id),
    askOwner: async (request, owned) => {
      const { nc, prefix, requestTimeoutMs } = this.options;
      this.forwarded++;
      try {
        return decodeResponse((await nc.request(ownerSubject(prefix, owned.kind, owned.id), encodeRequest(request), { timeout: requestTimeoutMs })).data);
      } catch (err) {
        if ((err instanceof errors.RequestError && err.isNoResponders()) || err instanceof errors.NoRespondersError) return undefined;
        return this.failed(err, request);
      }
    },
    local: (request) => this.local(request),
    tellOthers: async (request) => {
      const { nc, prefix, requestTimeoutMs, membership } = this.options;
      const data = encodeRequest(request);
      await Promise.all(membership.others().map((member) => nc.request(nodeSubject(prefix, member.node), data, { timeout: requestTimeoutMs }).catch(() => undefined)));
    },
  };

  private async gatherApplications(request: ClusterAriRequest, list: boolean): Promise<ClusterAriResponse> {
    const { nc, prefix, requestTimeoutMs, membership } = this.options;
    this.gathered++;
    const data = encodeRequest(request);
    const [own, ...remote] = await Promise.all([
      this.local(request),
      ...membership.others().map((member) => nc.request(nodeSubject(prefix, member.node), data, { timeout: requestTimeoutMs }).then((reply) => decodeResponse(reply.data), () => undefined)),
    ]);
    if (list) return mergeApplicationLists(own, remote);
    return mergeApplications(own, remote.filter((answer): answer is ClusterAriResponse => answer !== undefined && answer.status === 200));
  }

  /** How a stored recording of another member is found (stored-recordings.ts). */
  private readonly storedRecordingRouting: StoredRecordingRouting = {
    local: (request) => this.local(request),
    askOthers: (request) => {
      const { nc, prefix, requestTimeoutMs, membership } = this.options;
      this.forwarded++;
      const data = encodeRequest(request);
      return Promise.all(membership.others().map((member) => nc.request(nodeSubject(prefix, member.node), data, { timeout: requestTimeoutMs }).then((reply) => decodeResponse(reply.data), () => undefined)));
    },
  };

  /** Asks every other member at once whether it holds the resource; the holder's answer, as soon as it comes, wins. */
  private async askEveryone(request: ClusterAriRequest, owned: OwnedResource): Promise<ClusterAriResponse> {
    this.forwarded++;
    return (await this.findHolder(request, owned)) ?? this.local(request);
  }

  /** The answer of the other member holding the resource (first-holder.ts); undefined when none does (or answers within `timeoutMs`). */
  private findHolder(request: ClusterAriRequest, owned: OwnedResource, timeoutMs = this.options.requestTimeoutMs): Promise<ClusterAriResponse | undefined> {
    const { nc, prefix, membership } = this.options;
    const data = encodeRequest(request, owned);
    return firstHolder(
      membership.others().map((member) =>
        nc.request(nodeSubject(prefix, member.node), data, { timeout: timeoutMs }).then(
          (reply) => decodeResponse(reply.data),
          () => undefined,
        ),
      ),
    );
  }

  /**
   * A new channel goes to the member named by `cluster_node`, else to the least loaded live member
   * (this one on a tie: no hop). A client-chosen id is left to the member it is asked of, so that
   * an id cannot be made twice on two members.
   */
  private place(request: ClusterAriRequest, chosenId: string | undefined, originatorPlaced = false): Promise<ClusterAriResponse> | undefined {
    const { membership, node, prefix, nc, requestTimeoutMs, placeOnSelf = true } = this.options;
    // A channel made for an originator (`originator=`) is linked to it: made on its member.
    const originator = request.query.get('originator');
    if (!originatorPlaced && originator !== null && originator !== '' && request.query.get(PLACEMENT_HINT) === null && !this.options.ownership.holds('channel', originator)) {
      return this.placeWithOriginator(request, originator, chosenId);
    }
    if (chosenId !== undefined) {
      if (placeOnSelf || chosenId === '' || this.options.ownership.holds('channel', chosenId)) return undefined;
      return this.placeChosenId(request, chosenId, originatorPlaced);
    }
    const hint = request.query.get(PLACEMENT_HINT);
    let target: string | undefined;
    if (hint !== null) {
      if (hint === node) return undefined;
      const named = membership.others().find((member) => member.node === hint);
      if (!named) return Promise.resolve({ status: 400, headers: {}, json: { message: `${PLACEMENT_HINT} '${hint.slice(0, 64)}' names no live cluster member` } });
      // As the draining member itself would answer (a graceful stop refuses new channels).
      if (named.draining) return Promise.resolve({ status: 503, headers: {}, json: { message: `Refusing new channels: cluster member ${hint} is shutting down gracefully` } });
      target = hint;
    } else {
      const chosen = this.placementTarget();
      if (chosen === undefined) return Promise.resolve({ status: 503, headers: {}, json: { message: 'No other live cluster member takes new channels (cluster.place_on_self is false)' } });
      if (chosen === node) return undefined;
      target = chosen;
    }
    this.forwarded++;
    return nc.request(nodeSubject(prefix, target), encodeRequest(request), { timeout: requestTimeoutMs }).then(
      (reply) => decodeResponse(reply.data),
      (err: unknown) => this.failed(err, request),
    );
  }

  /**
   * A front (`place_on_self: false`) places a channel with a client-chosen id too: an id some member
   * holds goes to that member, which answers as a single server does for an id in use; a free one
   * is placed as any new channel. (Two creates of one free id at the same instant on two members
   * are not caught: the window is one NATS round trip.)
   */
  private async placeChosenId(request: ClusterAriRequest, id: string, originatorPlaced: boolean): Promise<ClusterAriResponse> {
    // The second id of a Local pair (otherChannelId) must be free too: in use, its member refuses it.
    const other = request.query.get('otherChannelId');
    for (const chosen of other === null || other === '' || other === id ? [id] : [id, other]) {
      if (this.options.ownership.holds('channel', chosen)) return this.local(request);
      if ((await this.whoOwns(request, 'channel', chosen)) !== undefined) return this.toOwner(request, { kind: 'channel', id: chosen });
    }
    return this.place(request, undefined, originatorPlaced) ?? this.local(request);
  }

  /**
   * On the originator's member. An originator nobody holds is placed as any channel, and the member
   * chosen answers for it as a single server does (originate: 400; create: ignored).
   */
  private async placeWithOriginator(request: ClusterAriRequest, originator: string, chosenId: string | undefined): Promise<ClusterAriResponse> {
    const owner = await this.whoOwns(request, 'channel', originator);
    if (owner === undefined) return this.place(request, chosenId, true) ?? this.local(request);
    if (owner === this.options.node) return this.local(request);
    const query = new URLSearchParams(request.query);
    query.set(PLACEMENT_HINT, owner);
    return this.place({ ...request, query }, chosenId, true) ?? this.local(request);
  }

  /** The member a new channel goes to without a hint; undefined when none may take it. */
  private placementTarget(): string | undefined {
    const { membership, node, placement = 'least_loaded', placeOnSelf = true } = this.options;
    const candidates = membership.list().filter((member) => !member.draining && (placeOnSelf || member.node !== node));
    if (candidates.length === 0) return placeOnSelf ? node : undefined;
    if (placement === 'round_robin') {
      // By node name, so the turn does not depend on the order heartbeats arrived in.
      candidates.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
      const member = candidates[this.turn % candidates.length]!;
      this.turn = (this.turn + 1) % 1_000_000;
      return member.node;
    }
    let best = candidates.sort((a, b) => a.load.channels - b.load.channels)[0]!;
    const self = candidates.find((member) => member.node === node);
    if (self && best.load.channels === self.load.channels) best = self;
    return best.node;
  }

  /**
   * A bridge with a channel of another member: its owner decides, and joins the channel through a
   * cluster-internal media leg (bridge-legs.ts); without one (max_media_legs 0 on this member), 501.
   */
  private async addToBridge(request: ClusterAriRequest, bridgeId: string): Promise<ClusterAriResponse> {
    const { ownership, node } = this.options;
    const bridgeOwner = ownership.holds('bridge', bridgeId) ? node : await this.whoOwns(request, 'bridge', bridgeId);
    if (bridgeOwner === undefined) return this.local(request);
    const { owners, across } = await this.channelOwners(request, bridgeOwner);
    if (across !== undefined) {
      if (this.crossBridges) return this.crossBridges.add(request, bridgeId, bridgeOwner, owners);
      const channelOwner = owners.find((entry) => entry.id === across)!.node;
      return { status: 501, headers: {}, json: { message: `Channel ${across} lives on cluster member ${channelOwner} and bridge ${bridgeId} on ${bridgeOwner}: a bridge across cluster members is not supported yet` } };
    }
    return bridgeOwner === node ? this.local(request) : this.toOwner(request, { kind: 'bridge', id: bridgeId });
  }

  /** removeChannel of a channel that stands in a bridge for another member's: taken out by the bridge's owner. */
  private async removeFromBridge(request: ClusterAriRequest, bridgeId: string, crossBridges: CrossMemberBridges): Promise<ClusterAriResponse> {
    const { ownership, node } = this.options;
    const bridgeOwner = ownership.holds('bridge', bridgeId) ? node : await this.whoOwns(request, 'bridge', bridgeId);
    if (bridgeOwner === undefined) return this.local(request);
    const { owners } = await this.channelOwners(request, bridgeOwner);
    const handled = await crossBridges.remove(bridgeId, bridgeOwner, owners);
    if (handled) return handled;
    return bridgeOwner === node ? this.local(request) : this.toOwner(request, { kind: 'bridge', id: bridgeId });
  }

  /** The member holding each listed channel (the bridge's owner for one nobody holds: it answers 400 there), and the first held elsewhere. */
  private async channelOwners(request: ClusterAriRequest, bridgeOwner: string): Promise<{ owners: Array<{ id: string; node: string }>; across: string | undefined }> {
    const { ownership, node } = this.options;
    const owners: Array<{ id: string; node: string }> = [];
    let across: string | undefined;
    for (const channelId of listedChannels(request)) {
      const channelOwner = ownership.holds('channel', channelId) ? node : await this.whoOwns(request, 'channel', channelId);
      if (channelOwner !== undefined && channelOwner !== bridgeOwner) across ??= channelId;
      owners.push({ id: channelId, node: channelOwner ?? bridgeOwner });
    }
    return { owners, across };
  }

  private async setVideoSource(request: ClusterAriRequest, bridgeId: string, channelId: string, videoSources: CrossMemberVideoSource): Promise<ClusterAriResponse> {
    const answer = await videoSources.set(bridgeId, channelId, async (id) => {
      const reply = await this.probe(request, 'channel', id);
      return reply?.status === 200 && reply.json !== null && typeof reply.json === 'object' ? (reply.json as Record<string, unknown>) : undefined;
    });
    return answer ?? this.local(request);
  }

  /** The caller's identity is handed over first (dial-identity.ts), then the dial is served by the dialled channel's member. */
  private async dialWithRemoteCaller(request: ClusterAriRequest, calleeId: string, callerId: string, identity: DialIdentity): Promise<ClusterAriResponse> {
    const { ownership, node } = this.options;
    const calleeHere = ownership.holds('channel', calleeId);
    const [calleeNode, callerNode] = await Promise.all([calleeHere ? node : this.whoOwns(request, 'channel', calleeId), ownership.holds('channel', callerId) ? node : this.whoOwns(request, 'channel', callerId)]);
    if (calleeNode !== undefined && callerNode !== undefined && calleeNode !== callerNode) await identity.inherit(callerId, callerNode, calleeId, calleeNode);
    return calleeHere ? this.local(request) : this.toOwner(request, { kind: 'channel', id: calleeId });
  }

  /** The member holding a channel or bridge (asked with a GET of it as the same user), if any. */
  private async whoOwns(request: ClusterAriRequest, kind: 'channel' | 'bridge', id: string): Promise<string | undefined> {
    const reply = await this.probe(request, kind, id);
    return reply?.status === 200 ? reply.headers[SERVED_BY_HEADER] : undefined;
  }

  /** Its owner's answer to a GET of a channel or bridge (as the same user); undefined when nobody answers. */
  private async probe(request: ClusterAriRequest, kind: 'channel' | 'bridge', id: string): Promise<ClusterAriResponse | undefined> {
    const { nc, prefix, requestTimeoutMs } = this.options;
    const probe: ClusterAriRequest = { method: 'GET', path: `/${kind}s/${encodeURIComponent(id)}`, query: new URLSearchParams(), user: request.user, transport: request.transport };
    try {
      return decodeResponse((await nc.request(ownerSubject(prefix, kind, id), encodeRequest(probe), { timeout: requestTimeoutMs })).data);
    } catch {
      return undefined;
    }
  }

  /** Every live member's listing (this one's included), merged without duplicates. */
  private async gather(request: ClusterAriRequest, keyOf: (item: Record<string, unknown>) => string): Promise<ClusterAriResponse> {
    const { nc, prefix, requestTimeoutMs, membership, log } = this.options;
    this.gathered++;
    const data = encodeRequest(request);
    const [own, ...remote] = await Promise.all([
      this.local(request),
      ...membership.others().map((member) =>
        nc.request(nodeSubject(prefix, member.node), data, { timeout: requestTimeoutMs }).then(
          (reply) => decodeResponse(reply.data),
          (err: unknown) => {
            log.warn({ err, node: member.node }, 'cluster member did not answer a listing: its items are missing');
            return undefined;
          },
        ),
      ),
    ]);
    if (own.status !== 200 || !Array.isArray(own.json)) return own;
    const seen = new Set<string>();
    const merged: unknown[] = [];
    for (const answer of [own, ...remote]) {
      if (!answer || answer.status !== 200 || !Array.isArray(answer.json)) continue;
      for (const item of answer.json) {
        if (item === null || typeof item !== 'object') continue;
        const key = keyOf(item as Record<string, unknown>);
        if (seen.has(key)) continue;
        seen.add(key);
        merged.push(item);
      }
    }
    return { ...own, json: merged };
  }

  /** This member's answer, and every other live member's (undefined: it did not answer in time). */
  private async askAll(request: ClusterAriRequest): Promise<[ClusterAriResponse, Array<ClusterAriResponse | undefined>]> {
    const { nc, prefix, requestTimeoutMs, membership, log } = this.options;
    this.gathered++;
    const data = encodeRequest(request);
    const remote = membership.others().map((member) =>
      nc.request(nodeSubject(prefix, member.node), data, { timeout: requestTimeoutMs }).then(
        (reply) => decodeResponse(reply.data),
        (err: unknown) => {
          log.warn({ err, node: member.node }, 'cluster member did not answer: its part is missing');
          return undefined;
        },
      ),
    );
    return [await this.local(request), await Promise.all(remote)];
  }

  /** Served by this member's own dispatch (set by the cluster: the dispatcher with `forwarded`). */
  local: (request: ClusterAriRequest) => Promise<ClusterAriResponse> = () => Promise.resolve({ status: 404, headers: {}, json: { message: 'Resource not found' } });

  private failed(err: unknown, request: ClusterAriRequest): Promise<ClusterAriResponse> | ClusterAriResponse {
    // Nobody holds it: served here, as a single server would (404, or a create with that id).
    if (err instanceof errors.RequestError && err.isNoResponders()) return this.local(request);
    if (err instanceof errors.NoRespondersError) return this.local(request);
    // Larger than a NATS message may be (the server's max_payload): it cannot reach the owner.
    if (err instanceof errors.InvalidArgumentError && /max_payload/.test(err.message)) {
      return { status: 400, headers: {}, json: { message: 'Request too large to be forwarded to the cluster member holding its resource (NATS max_payload)' } };
    }
    if (err instanceof errors.TimeoutError || (err instanceof errors.RequestError && err.cause instanceof errors.TimeoutError)) {
      return { status: 504, headers: {}, json: { message: 'The cluster member owning the resource did not answer in time' } };
    }
    this.options.log.warn({ err }, 'request not forwarded to its owner');
    return { status: 503, headers: {}, json: { message: 'The cluster is unreachable (NATS)' } };
  }
}

function isNoResponders(err: unknown): boolean {
  return (err instanceof errors.RequestError && err.isNoResponders()) || err instanceof errors.NoRespondersError;
}

/** A channel's name is `<technology>/<resource>`; a generated or client-chosen id never holds a slash in practice. */
function looksLikeChannelName(idOrName: string): boolean {
  return idOrName.includes('/');
}

/** The resource a request is about, from its path parameters. */
export function resourceOf(path: string, pathParams: Readonly<Record<string, string>>): OwnedResource | undefined {
  const pick = (kind: ResourceKind, id: string | undefined): OwnedResource | undefined => (id === undefined ? undefined : { kind, id });
  if (path.startsWith('/channels/')) return pick('channel', pathParams.channelId);
  if (path.startsWith('/bridges/')) return pick('bridge', pathParams.bridgeId);
  // `/playback/{id}` is Asterisk's singular alias of `/playbacks/{id}`.
  if (path.startsWith('/playbacks/') || path.startsWith('/playback/')) return pick('playback', pathParams.playbackId);
  if (path.startsWith('/recordings/live/')) return pick('recording', pathParams.recordingName);
  return undefined;
}
