// How addChannel and removeChannel reach the bridge's owner when the bridge and a channel live on
// different members: the member the request came to has found the owners (the forwarder), and
// hands the decision to the bridge's owner as a leg message (`add` / `remove`), which answers with
// ARI's status and message. The bridge's owner may be this member (then no NATS hop).
import type { NatsConnection } from '@nats-io/transport-node';
import { legSubject, type ClusterBridgeLegs } from './bridge-legs.ts';
import { decodeLegReply, encodeLeg, MAX_LISTED_CHANNELS, type AddToBridge, type LegMessage, type LegReply } from './media-leg-wire.ts';
import type { ClusterAriRequest, ClusterAriResponse } from './wire.ts';

/** The channel ids of an addChannel/removeChannel request, as ARI reads the list. */
export function listedChannels(request: ClusterAriRequest): string[] {
  return (request.query.get('channel') ?? '').split(',').map((id) => id.trim()).filter((id) => id !== '').slice(0, MAX_LISTED_CHANNELS);
}

/** ARI's booleans in a query string. */
function flag(request: ClusterAriRequest, name: string): boolean | undefined {
  const value = request.query.get(name);
  return value === 'true' ? true : undefined;
}

export function toResponse(reply: LegReply): ClusterAriResponse {
  if (reply.status === 204) return { status: 204, headers: {} };
  return { status: reply.status, headers: {}, json: { message: reply.message ?? 'Bridge leg failed' } };
}

export class CrossMemberBridges {
  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly node: string,
    private readonly legs: ClusterBridgeLegs,
    private readonly requestTimeoutMs: number,
  ) {}

  /** addChannel with channels of several members: decided by the bridge's owner. */
  async add(request: ClusterAriRequest, bridgeId: string, bridgeOwner: string, owners: ReadonlyArray<{ id: string; node: string }>): Promise<ClusterAriResponse> {
    const role = request.query.get('role')?.trim() ?? '';
    const message: AddToBridge = {
      op: 'add',
      bridge: bridgeId,
      channels: owners,
      roles: role === '' ? [] : [role],
      ...(flag(request, 'mute') !== undefined ? { mute: true } : {}),
      ...(flag(request, 'absorbDTMF') !== undefined ? { absorbDtmf: true } : {}),
      ...(flag(request, 'inhibitConnectedLineUpdates') !== undefined ? { inhibitConnectedLineUpdates: true } : {}),
    };
    return toResponse(await this.ask(bridgeOwner, message));
  }

  /**
   * removeChannel on the bridge's owner when one of the channels stands in for another member's;
   * undefined when none does (the request goes its ordinary way).
   */
  async remove(bridgeId: string, bridgeOwner: string, channels: ReadonlyArray<{ id: string; node: string }>): Promise<ClusterAriResponse | undefined> {
    if (channels.length === 0) return undefined;
    const reply = await this.ask(bridgeOwner, { op: 'remove', bridge: bridgeId, channels });
    return reply.status === 0 ? undefined : toResponse(reply);
  }

  private async ask(node: string, message: LegMessage): Promise<LegReply> {
    if (node === this.node) return this.legs.handle(message);
    try {
      return decodeLegReply((await this.nc.request(legSubject(this.prefix, node), encodeLeg(message), { timeout: this.requestTimeoutMs })).data);
    } catch {
      return { status: 504, message: `Cluster member ${node} holding the bridge did not answer in time` };
    }
  }
}
