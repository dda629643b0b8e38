// A blind transfer a technology asks for (a SIP REFER) on a channel in an application's bridge,
// carried out as Asterisk's bridging core does by default (ast_bridge_transfer_blind on a Stasis
// bridge; captured from Asterisk 22.10.1, docs/sip.md "Transfers (REFER)"): a Local pair is made to
// the destination, its `;1` enters the transferer's application (StasisStart with
// `replace_channel`) and takes the transferer's seat in the bridge, its `;2` runs the dialplan at
// the destination, and BridgeBlindTransfer is raised. The transferer itself stays in its
// application, out of the bridge: its technology decides when it ends.
import type { Model } from '../../spec/index.ts';
import { blindTransferEvent, type TransferResult } from './call-transfers.ts';
import type { Channel, DialplanLocation } from './channel.ts';

/** The part of an application's bridge the transfer works with. */
export interface TransferBridge {
  readonly id: string;
  channelIds(): string[];
  replace(existing: Channel, replacement: Channel): boolean;
  eventSnapshot(): Model<'Bridge'>;
}

export interface StasisBridgeTransferDeps {
  /** The application's bridge the channel is in (not a Dial() call's basic bridge). */
  bridgeOf(channel: Channel): TransferBridge | undefined;
  channel(id: string): Channel | undefined;
  /** Makes the Local pair to `exten@context` on behalf of `requestor`; returns its `;1`. Throws when it cannot. */
  requestLocal(destination: Pick<DialplanLocation, 'context' | 'exten'>, requestor: Channel): Channel;
  /** Puts `channel` into `app` with StasisStart's `replace_channel`; false when the application is gone. */
  enterApplication(channel: Channel, app: string, replaced: Channel): boolean;
}

export interface StasisBridgeTransferOutcome {
  readonly result: TransferResult;
  /** The `;1` now seated in the bridge. */
  readonly replacement?: Channel;
}

/**
 * Transfers `transferer`'s seat in its application's bridge to a Local channel running the dialplan
 * at `destination`. `variables` (what the protocol tells the new call's dialplan) are set on `;1`
 * before it is called, so `;2` inherits them. Invalid when the transferer is in no application's bridge.
 */
export function stasisBridgeBlindTransfer(
  deps: StasisBridgeTransferDeps,
  transferer: Channel,
  destination: Pick<DialplanLocation, 'context' | 'exten'>,
  variables: ReadonlyArray<readonly [string, string]> = [],
): StasisBridgeTransferOutcome {
  const app = transferer.stasis?.app;
  const bridge = deps.bridgeOf(transferer);
  if (!app || !bridge) return { result: 'Invalid' };
  const others = bridge
    .channelIds()
    .filter((id) => id !== transferer.id)
    .map((id) => deps.channel(id))
    .filter((channel): channel is Channel => channel !== undefined);
  // Only a two-party bridge names its transferee, as Asterisk's blind transfer message does.
  const transferee = others.length === 1 ? others[0] : undefined;
  // BLINDTRANSFER names the other party on each side (captured: set before the Local pair exists).
  if (transferee) {
    transferer.setSystemVariable('BLINDTRANSFER', transferee.name, true);
    transferee.setSystemVariable('BLINDTRANSFER', transferer.name, true);
  }
  let replacement: Channel;
  try {
    replacement = deps.requestLocal(destination, transferer);
  } catch {
    return publish('Fail');
  }
  replacement.setSystemVariable('BLINDTRANSFER', transferer.name, true);
  for (const [name, value] of variables) replacement.setVariable(name, value, true);
  // Calling `;1` starts `;2`'s dialplan (after this turn: the seat is taken first).
  replacement.driver.call();
  if (!deps.enterApplication(replacement, app, transferer) || !bridge.replace(transferer, replacement)) {
    if (!replacement.hangingUp) replacement.hangup();
    return publish('Fail');
  }
  return publish('Success', replacement);

  function publish(result: TransferResult, seated?: Channel): StasisBridgeTransferOutcome {
    const event = blindTransferEvent({
      transferer,
      destination,
      result,
      transferee,
      replacement: seated,
      bridge: bridge!.eventSnapshot(),
    });
    const channelIds = [transferer.id, ...(transferee ? [transferee.id] : []), ...(seated ? [seated.id] : [])];
    transferer.publishEvent(event, { channelIds, bridgeIds: [bridge!.id] });
    return { result, ...(seated ? { replacement: seated } : {}) };
  }
}
