// BRIDGEPEER and BRIDGEPVTCALLID, the channel variables a bridge keeps on its members, set as
// Asterisk 22's bridge core sets them on every reconfiguration (bridge.c set_bridge_peer_vars;
// captured with a subscribe-all application, docs/differences.md):
// - two members: each names the other, and BRIDGEPVTCALLID holds the other's call id when its
//   technology has one (a SIP Call-ID, the driver's protocolId); the first member is told first;
// - more: each gets a comma list of the others' names, no BRIDGEPVTCALLID. The list is made of the
//   first 11 members only (Asterisk's MAX_BRIDGEPEER_CHANS, 10 peers + the member itself), so the
//   work per join stays a bounded string per member; members past the 11th all get the list the
//   11th got (the first 10 names);
// - one member: nothing changes (it keeps the name of the one that left);
// - a holding bridge: both are cleared;
// - a member leaving (or a bridge dissolving) has both cleared before its ChannelLeftBridge.
// Clearing raises ChannelVarset "" only for a variable that had a value; setting raises it always,
// even with the value unchanged, as pbx_builtin_setvar_helper does.
import type { Channel } from '../channels/channel.ts';

const PEER_VARIABLE = 'BRIDGEPEER';
const PEER_CALL_ID_VARIABLE = 'BRIDGEPVTCALLID';
/** Asterisk's MAX_BRIDGEPEER_CHANS: the names a multi-party BRIDGEPEER is made from (10 peers + self). */
const MAX_PEER_LIST_MEMBERS = 11;

/**
 * Each member of a two-member bridge and the other, as Asterisk's ast_channel_bridge_peer answers it
 * (the RTPAUDIOQOS*BRIDGED variables go to that peer). Weak: a forgotten channel takes its entry along.
 */
const twoMemberPeers = new WeakMap<Channel, Channel>();

/** The other member of the two-member bridge `channel` is in; undefined alone or among more. */
export function bridgePeerOf(channel: Channel): Channel | undefined {
  const peer = twoMemberPeers.get(channel);
  if (!peer || channel.bridgeId === undefined || peer.bridgeId !== channel.bridgeId || peer.destroyed) return undefined;
  return peer;
}

/** BRIDGEPEER, and BRIDGEPVTCALLID where the peer's technology has a call id of its own (a SIP Call-ID). */
export function setPeerVariables(channel: Channel, peer: Channel): void {
  twoMemberPeers.set(channel, peer);
  if (channel.hangingUp) return;
  channel.setSystemVariable(PEER_VARIABLE, peer.name);
  if (peer.protocolId) channel.setSystemVariable(PEER_CALL_ID_VARIABLE, peer.protocolId);
  else unsetVariable(channel, PEER_CALL_ID_VARIABLE);
}

export function clearPeerVariables(channel: Channel): void {
  twoMemberPeers.delete(channel);
  unsetVariable(channel, PEER_VARIABLE);
  unsetVariable(channel, PEER_CALL_ID_VARIABLE);
}

/** Asterisk announces an unset (ChannelVarset with "") only for a variable that had a value. */
export function unsetVariable(channel: Channel, name: string): void {
  if (channel.getVariable(name)) channel.setSystemVariable(name, undefined);
}

/**
 * The members of a Stasis bridge in the order Asterisk's bridge keeps them (its channel list),
 * which is the order BRIDGEPEER is set in. It differs from the order they entered (what the
 * bridge's `channels` show): when a join switches the bridge's technology (simple_bridge to
 * softmix at the third member), Asterisk moves the members already in behind the one that just
 * joined (bridge.c smart_bridge_operation), so the newcomer is told first from then on.
 */
export class BridgePeers {
  #order: Channel[] = [];

  /**
   * `holding`: a holding bridge (clears the variables, sets none). `silent`: a bridge nobody sees
   * (a cluster media leg's hidden bridge, whose other member is a leg end, not a peer): keeps its
   * order and never touches a variable.
   */
  constructor(
    private readonly holding: boolean,
    private readonly silent = false,
  ) {}

  /** In Asterisk's list order: the order a dissolving bridge clears and lets go of its members. */
  members(): readonly Channel[] {
    return this.#order;
  }

  /** `channel` entered (after its ChannelEnteredBridge); `technologyChanged`: its join switched the technology. */
  joined(channel: Channel, technologyChanged: boolean): void {
    if (technologyChanged) this.#order.unshift(channel);
    else this.#order.push(channel);
    // A holding bridge clears them on every member; only the newcomer can hold one (the others
    // were cleared as they came in), so only it is looked at.
    if (this.silent) return;
    if (this.holding) clearPeerVariables(channel);
    else this.#reconfigure();
  }

  /** `channel` is leaving (before its ChannelLeftBridge): it loses both variables. */
  leaving(channel: Channel): void {
    this.forget(channel);
    if (!this.silent) clearPeerVariables(channel);
  }

  /** `channel` is gone without a word (a cluster stand-in whose own member announced its leave). */
  forget(channel: Channel): void {
    const index = this.#order.indexOf(channel);
    if (index >= 0) this.#order.splice(index, 1);
  }

  /** A member left (after its ChannelLeftBridge): the others are told again. */
  left(): void {
    if (!this.holding && !this.silent) this.#reconfigure();
  }

  /** The bridge dissolves: every member loses both variables, in list order, before any leaves. */
  dissolve(): Channel[] {
    const order = this.#order;
    this.#order = [];
    if (!this.silent) for (const channel of order) clearPeerVariables(channel);
    return order;
  }

  #reconfigure(): void {
    const order = this.#order;
    if (order.length < 2) return;
    if (order.length === 2) {
      const [first, second] = order;
      setPeerVariables(first, second);
      setPeerVariables(second, first);
      return;
    }
    const listed = order.slice(0, MAX_PEER_LIST_MEMBERS);
    const names = listed.map((channel) => channel.name);
    let value = '';
    for (let index = 0; index < order.length; index++) {
      // Past the listed members the last list made is kept, as Asterisk's fill loop stops there.
      if (index < listed.length) value = names.filter((_, other) => other !== index).join(',');
      const channel = order[index];
      twoMemberPeers.delete(channel);
      if (channel.hangingUp) continue;
      channel.setSystemVariable(PEER_VARIABLE, value);
      unsetVariable(channel, PEER_CALL_ID_VARIABLE);
    }
  }
}
