// setVideoSource naming a channel of another member: on the bridge's member that channel is in the
// bridge only through the end standing in for it (bridge-legs.ts), which carries its id but is not
// in the channel table, so ARI's own handler would answer 404. This answers as one server does:
// the stand-in becomes the source (the bridge then shows the channel's id); a channel held
// elsewhere that has no stand-in in the bridge is told apart as ARI does (not in Stasis: 409, not
// in the bridge: 422) from its owner's snapshot.
import type { Core } from '../control/core.ts';
import type { ClusterBridgeLegs } from './bridge-legs.ts';
import type { ClusterAriResponse } from './wire.ts';

/** A channel's snapshot from the member holding it; undefined when no member holds it. */
export type SnapshotProbe = (channelId: string) => Promise<Readonly<Record<string, unknown>> | undefined>;

export class CrossMemberVideoSource {
  constructor(
    private readonly core: Core,
    private readonly legs: ClusterBridgeLegs,
  ) {}

  /**
   * The answer for a bridge held on this member and a channel not held here; undefined when the
   * request should be served as usual (the bridge is not here, or no member holds the channel:
   * the local handler's 404s are the right answers then).
   */
  async set(bridgeId: string, channelId: string, probe: SnapshotProbe): Promise<ClusterAriResponse | undefined> {
    const bridge = this.core.bridges.get(bridgeId);
    if (!bridge || this.core.channels.get(channelId)) return undefined;
    const standIn = this.legs.standIn(channelId);
    if (standIn && bridge.has(standIn)) {
      bridge.setVideoSource(standIn);
      return { status: 204, headers: {} };
    }
    const snapshot = await probe(channelId);
    if (snapshot === undefined) return undefined;
    // A stand-in exists only for a channel in Stasis (addChannel requires it), so the checks keep
    // ARI's order: a channel elsewhere not in Stasis is 409 before it is 422.
    const dialplan = snapshot.dialplan;
    const appName = dialplan !== null && typeof dialplan === 'object' ? (dialplan as Record<string, unknown>).app_name : undefined;
    if (appName !== 'Stasis' && !standIn) return { status: 409, headers: {}, json: { message: 'Channel not in Stasis application' } };
    return { status: 422, headers: {}, json: { message: 'Channel not in bridge' } };
  }
}
