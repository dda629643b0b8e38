// The connected-line exchange of a two-party bridge, as Asterisk's bridge reconfiguration does it
// (bridge_reconfigured_connected_line_update): each party learns who it now talks to.
import type { CallerId, Channel } from '../channels/channel.ts';
import type { BridgeMember } from './bridge-types.ts';

/**
 * In a two-party bridge each party's connected line becomes the other's caller id; a party that
 * entered with inhibitConnectedLineUpdates stops it. ChannelConnectedLine is raised only for a
 * party whose connected line really changes; each party's technology is told it (a SIP phone gets
 * a re-INVITE or UPDATE) unless it was told the same before. `members` are the bridge's two members.
 */
export function exchangeConnectedLines(members: Iterable<BridgeMember>): void {
  const [first, second] = [...members];
  if (!first || !second || first.inhibitColp || second.inhibitColp) return;
  // As Asterisk: a party being hung up stops both updates.
  if (first.channel.hangingUp || second.channel.hangingUp) return;
  const firstCaller = { ...first.channel.caller };
  const secondCaller = { ...second.channel.caller };
  const firstPresentation = first.channel.callerPresentation;
  update(first.channel, secondCaller, second.channel.callerPresentation);
  update(second.channel, firstCaller, firstPresentation);
  // Each party's technology is told whom it talks to (the bridge queues both updates).
  first.channel.indicateConnectedLine('bridge');
  second.channel.indicateConnectedLine('bridge');
}

function update(channel: Channel, { name, number }: CallerId, presentation: number): void {
  if (channel.hangingUp) return;
  // The presentation travels with the party; alone it raises no event (as Asterisk compares name and number).
  channel.connectedPresentation = presentation;
  if (channel.connected.name === name && channel.connected.number === number) return;
  channel.setConnected({ name, number });
}
