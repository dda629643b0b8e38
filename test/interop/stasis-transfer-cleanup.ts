// What the attended-transfer suites with two Stasis bridges (sipp-refer-replaces, sipp-stasis-attended-refer)
// leave once the transfer is checked: the Local pair that links the bridges, the two callees, the
// two bridges, and SIPp bob, whose scenario ends with the BYE this sends.
import assert from 'node:assert/strict';
import type { Json, SippRun, SippServer } from './sipp-peer.ts';

/** One leg of the transfer: the callee the suite originated into its own bridge. */
export interface TransferLeg {
  readonly calleeId: string;
  readonly bridge: Json;
}

/**
 * Hangs up the Local pair of `transfer` (a BridgeAttendedTransfer linking the bridges: ending `;1`
 * ends `;2`), each leg's callee and bridge, then waits for SIPp bob to end well.
 */
export async function endTransferLink(setup: SippServer, transfer: Json, legs: readonly TransferLeg[], bob: { readonly done: Promise<SippRun> }): Promise<void> {
  const ari = (path: string) => setup.server.ari(path, { method: 'DELETE' });
  assert.equal((await ari(`/channels/${String(transfer.destination_link_first_leg.id)}`)).status, 204);
  for (const leg of legs) await ari(`/channels/${leg.calleeId}`);
  for (const leg of legs) await ari(`/bridges/${String(leg.bridge.id)}`);
  const bobRun = await bob.done;
  assert.equal(bobRun.status, 0, bobRun.output);
}
