// The DTLS-SRTP handshake of a WebRTC call when the far end retransmits (bench/webrtc-calls.ts found
// it: a burst of calls on a loaded main thread answers a flight after werift's 1 s retransmission
// timer, the far end sends its flight again, and werift reports an error for the copy although the
// handshake completes). Two DtlsKeying ends over an in-memory link, one direction slower than the
// timer: neither fails, each exports its keys once, and the keys agree.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { generateDtlsIdentity, type DtlsIdentity } from '../../src/media/webrtc/dtls-identity.ts';
import { DtlsKeying, type ExportedKeys } from '../../src/media/webrtc/dtls-keying.ts';
import { waitUntil } from '../sip/helpers.ts';

let clientIdentity: DtlsIdentity;
let serverIdentity: DtlsIdentity;
before(async () => {
  clientIdentity = await generateDtlsIdentity();
  serverIdentity = await generateDtlsIdentity();
});

const fingerprintOf = (identity: DtlsIdentity) => ({ algorithm: 'sha-256', value: identity.fingerprint.split(' ')[1]! });
const hex = (keys: ExportedKeys) => ({ local: Buffer.from(keys.local.keySalt).toString('hex'), remote: Buffer.from(keys.remote.keySalt).toString('hex') });

/** A handshake whose records take `clientToServerMs` one way and `serverToClientMs` the other. */
async function handshake(clientToServerMs: number, serverToClientMs: number) {
  const failures: string[] = [];
  const clientKeys: ExportedKeys[] = [];
  const serverKeys: ExportedKeys[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, deliver: () => void): Promise<void> => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      deliver();
    }, ms);
    timers.add(timer);
    return Promise.resolve();
  };
  let server: DtlsKeying;
  const client = new DtlsKeying(clientIdentity, { onFailure: (reason) => failures.push(`client: ${reason}`) }, (record) => {
    const copy = Buffer.from(record);
    return later(clientToServerMs, () => server.receive(copy));
  }, (keys) => clientKeys.push(keys));
  server = new DtlsKeying(serverIdentity, { onFailure: (reason) => failures.push(`server: ${reason}`) }, (record) => {
    const copy = Buffer.from(record);
    return later(serverToClientMs, () => client.receive(copy));
  }, (keys) => serverKeys.push(keys));
  try {
    client.configureRemote({ role: 'client', fingerprint: fingerprintOf(serverIdentity) });
    server.configureRemote({ role: 'server', fingerprint: fingerprintOf(clientIdentity) });
    server.pairChecked();
    client.pairChecked();
    await waitUntil(() => clientKeys.length > 0 && serverKeys.length > 0, 30_000, 'both ends keyed');
    // The far end's copies still in flight after the keys: they must neither fail nor re-key the call.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return { failures, clientKeys, serverKeys };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    client.close();
    server.close();
  }
}

for (const [clientToServerMs, serverToClientMs] of [[1_500, 5], [5, 1_500]] as const) {
  const slow = clientToServerMs > serverToClientMs ? 'client to server' : 'server to client';
  test(`DTLS-SRTP keys once and agrees when ${slow} takes 1.5 s (the other end retransmits its flights)`, { timeout: 60_000 }, async () => {
    const { failures, clientKeys, serverKeys } = await handshake(clientToServerMs, serverToClientMs);
    assert.deepEqual(failures, [], 'a retransmitted flight does not fail the call');
    assert.equal(clientKeys.length, 1, 'the client exports its keys once');
    assert.equal(serverKeys.length, 1, 'the server exports its keys once');
    const ours = hex(clientKeys[0]!);
    const theirs = hex(serverKeys[0]!);
    assert.equal(ours.local, theirs.remote, 'what the client protects with, the server checks with');
    assert.equal(ours.remote, theirs.local);
  });
}
