// What the external media suites share (RTP in external-media.test.ts, AudioSocket in
// audiosocket.test.ts): an external channel and a Local call put in one mixing bridge and taken
// down again, a 600 Hz tone from the Local party sent out through the external channel, the tone's
// frames picked out of what was heard, and waiting on a loaded machine.
import assert from 'node:assert/strict';
import { meanSquare } from '../../../src/media/energy.ts';
import type { TestServer } from '../../helpers/server.ts';
import { expectStatus, finish, localCall, ticks, toneWriter, type EventLog, type LocalCall } from '../../ari/bridges-helpers.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

/** The frames of a capture (or decoded packets, messages) that carry the tone, edges dropped, joined. */
export function toneBlocks(blocks: readonly Int16Array[], threshold: number): { samples: Int16Array; count: number } {
  const loud = blocks.filter((block) => Math.sqrt(meanSquare(block)) > threshold);
  const inner = loud.slice(1, -1);
  const samples = new Int16Array(inner.reduce((sum, block) => sum + block.length, 0));
  let offset = 0;
  for (const block of inner) {
    samples.set(block, offset);
    offset += block.length;
  }
  return { samples, count: loud.length };
}

/** An external channel (`ext`) and a Local call in the mixing bridge `bridgeId`. */
export interface BridgedExternal<External extends { readonly id: string }> {
  readonly ext: External;
  readonly local: LocalCall;
  readonly bridgeId: string;
}

/** Puts `ext` and a new Local call (`<name>-local`) in a new mixing bridge (`<name>-bridge`). */
export async function bridgeWithLocal<External extends { readonly id: string }>(
  server: TestServer,
  log: EventLog,
  app: string,
  ext: External,
  name: string,
): Promise<BridgedExternal<External>> {
  const local = await localCall(server, log, app, `${name}-local`);
  const bridgeId = `${name}-bridge`;
  await expectStatus(server, `/bridges/${bridgeId}?type=mixing`, 200);
  await expectStatus(server, `/bridges/${bridgeId}/addChannel?channel=${ext.id},${local.one.id}`, 204);
  return { ext, local, bridgeId };
}

/** Hangs up the channel through ARI unless it is gone already. */
export async function hangupIfUp(server: TestServer, id: string): Promise<void> {
  if (server.core.channels.get(id)) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
}

/** The external channel hung up, the Local call and the bridge ended, then the test's peer closed. */
export async function endBridged(server: TestServer, { ext, local, bridgeId }: BridgedExternal<{ readonly id: string }>, peer: { close(): Promise<void> }): Promise<void> {
  await hangupIfUp(server, ext.id);
  await finish(server, [local], [bridgeId]);
  await peer.close();
}

/**
 * The Local party says 600 Hz at amplitude 6000 for 50 ticks; then the external channel leaves the
 * bridge, so that everything it sent has been sent (and a little time to arrive).
 */
export async function toneOutThenLeave(server: TestServer, { ext, local, bridgeId }: BridgedExternal<{ readonly id: string }>): Promise<void> {
  const tone = toneWriter(server, (frame) => local.two.write(frame), 600, 6000);
  await ticks(server, 50);
  tone.stop();
  await ticks(server, 5);
  await expectStatus(server, `/bridges/${bridgeId}/removeChannel?channel=${ext.id}`, 204);
  await sleep(50);
}
