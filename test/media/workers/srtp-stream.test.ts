// SDES-SRTP on a stream that runs in a media worker (issue 25): the far end (a socket the test
// owns, with its own SrtpSession) sends SRTP and the main thread hears the audio; what the worker
// sends decrypts with the far end's session and is not plain RTP; a forged and a replayed packet
// are refused and counted into the totals GET /metrics reads; a re-INVITE repeating the keys keeps
// the running state (the far end's replay is still refused), one with a new remote key starts that
// direction afresh (the far end's new key is heard, its old one refused); keys that are not keys
// end the stream (the call hangs up), never the worker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { RtpStreamTotals, type StreamParameters } from '../../../src/media/rtp/stream.ts';
import { SrtpSession } from '../../../src/media/srtp/session.ts';
import type { SrtpMasterKey } from '../../../src/media/srtp/suites.ts';
import type { OpenRequest } from '../../../src/media/workers/pool.ts';
import type { RemoteRtpStream } from '../../../src/media/workers/remote-stream.ts';
import { workerSrtpKeys } from '../../../src/media/workers/worker-srtp.ts';
import { loopbackSocket, openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(30_000, 5_000);

/** An SRTP packet of PCMU `value` from the far end, protected with `session`. */
function srtpPacket(session: SrtpSession, sequence: number, value: number): Buffer {
  const packet = Buffer.alloc(172 + 32);
  packet[0] = 0x80;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(0xabc, 8);
  packet.fill(linearToUlaw(value), 12, 172);
  return Buffer.from(packet.subarray(0, session.protectRtp(packet, 172)));
}

const key = (suite: SrtpMasterKey['suite']): SrtpMasterKey => ({ suite, keySalt: randomBytes(30) });

describe('SDES-SRTP in a media worker', () => {
  const workers = useWorkerPool(1);

  async function open(totals: RtpStreamTotals, frames: number[], lost: string[]): Promise<RemoteRtpStream> {
    const request: OpenRequest = {
      host: '127.0.0.1',
      portStart: PORT_BASE,
      portEnd: PORT_BASE + 1_000,
      options: { rtcpIntervalMs: 300, symmetric: false },
      totals,
      events: { onFrame: (frame: Frame) => frames.push(frame.samples[80]), onDigit: () => undefined, onLost: (reason) => lost.push(reason) },
    };
    return openWhenReady(workers.pool, request);
  }

  test('both ways protected; forged and replayed packets refused and counted; re-keying keeps or restarts a direction as on the main thread', async () => {
    const ours = key('AES_CM_128_HMAC_SHA1_80');
    let theirs = key('AES_CM_128_HMAC_SHA1_32');
    let far = new SrtpSession(theirs, ours);
    const totals = new RtpStreamTotals();
    const frames: number[] = [];
    const lost: string[] = [];
    const stream = await open(totals, frames, lost);
    const [peer, peerRtcp] = await Promise.all([loopbackSocket(), loopbackSocket()]);
    const sent: Buffer[] = [];
    const reports: number[] = [];
    peer.on('message', (data) => sent.push(Buffer.from(data)));
    peerRtcp.on('message', (data) => reports.push(far.unprotectRtcp(data, data.length)));
    const parameters = (protection: SrtpSession): StreamParameters => ({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, remoteRtcpPort: peerRtcp.address().port, direction: 'sendrecv', protection });
    // The main thread's session only holds the keys (call-media.ts re-keys it in place, as here).
    const session = new SrtpSession(ours, theirs);
    const heard = (value: number): number => frames.filter((v) => v === ulawToLinear(linearToUlaw(value))).length;
    try {
      stream.configure(parameters(session));
      const tone = { rate: 8000 as const, samples: new Int16Array(160).fill(3000) };
      let sequence = 65_500;
      let replay: Buffer | undefined;
      // Across the sequence wrap: the worker's ROC estimate follows (RFC 3711 Appendix A).
      const talking = setInterval(() => {
        const packet = srtpPacket(far, sequence++, 1000);
        if (sequence === 65_505) replay = packet;
        peer.send(packet, stream.localPort, '127.0.0.1');
        stream.writeFrame(tone);
      }, 20);
      try {
        await waitFor(() => heard(1000) >= 60 && sent.length >= 20 && reports.length >= 1, 'audio both ways and an SRTCP report');
      } finally {
        clearInterval(talking);
      }
      assert.ok(sequence > 65_536, 'the far end\'s sequence wrapped');
      for (const packet of sent.slice(-10)) {
        assert.equal(packet.length, 172 + 10, 'SRTP with the 80-bit tag of our suite');
        assert.notEqual(packet.subarray(12, 172).toString('hex'), Buffer.alloc(160, linearToUlaw(3000)).toString('hex'), 'no plain audio on the wire');
        assert.equal(far.unprotectRtp(packet, packet.length), 172);
        assert.ok(packet.subarray(12, 172).every((byte) => byte === linearToUlaw(3000)));
      }
      assert.ok(reports.every((length) => length > 0), `SRTCP reports decrypt: ${reports.join(',')}`);

      // A forged packet and a replay: refused, counted (read through the shared figures), never heard.
      const forged = srtpPacket(far, sequence++, 5000);
      forged[40] ^= 0x10;
      peer.send(forged, stream.localPort, '127.0.0.1');
      peer.send(replay!, stream.localPort, '127.0.0.1');
      await waitFor(() => (stream.syncTotals(), totals.srtpRefusedPackets >= 2), 'the forged packet and the replay counted');
      assert.equal(heard(5000), 0);

      // A re-INVITE repeating both keys: the receiving state goes on (the replay is still one).
      session.rekey(ours, theirs);
      stream.configure(parameters(session));
      await new Promise((resolve) => setTimeout(resolve, 200));
      peer.send(replay!, stream.localPort, '127.0.0.1');
      await waitFor(() => (stream.syncTotals(), totals.srtpRefusedPackets >= 3), 'the replay refused after the same keys');

      // A new remote key: that direction starts afresh; the old key no longer authenticates.
      const old = far;
      theirs = key('AES_CM_128_HMAC_SHA1_80');
      far = new SrtpSession(theirs, ours);
      session.rekey(ours, theirs);
      stream.configure(parameters(session));
      await new Promise((resolve) => setTimeout(resolve, 200));
      peer.send(srtpPacket(old, sequence++, 7000), stream.localPort, '127.0.0.1');
      let fresh = 100;
      const again = setInterval(() => peer.send(srtpPacket(far, fresh++, 2000), stream.localPort, '127.0.0.1'), 20);
      try {
        await waitFor(() => heard(2000) >= 10, 'audio under the far end\'s new key');
      } finally {
        clearInterval(again);
      }
      stream.syncTotals();
      assert.equal(totals.srtpRefusedPackets, 4, 'the old key\'s packet refused too');
      assert.equal(heard(7000), 0);
      assert.deepEqual(lost, []);
    } finally {
      stream.close();
      peer.close();
      peerRtcp.close();
    }
  });

  test('keys cross as bytes of their own, not a view of a shared pool', () => {
    const pooled = Buffer.from(randomBytes(64).buffer, 0, 30);
    const keys = workerSrtpKeys(new SrtpSession({ suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: pooled }, key('AES_CM_128_HMAC_SHA1_80')));
    assert.ok(keys);
    assert.equal(keys.local.keySalt.buffer.byteLength, 30);
    assert.deepEqual([...keys.local.keySalt], [...pooled]);
  });

  test('keys that are not keys end the stream (its call hangs up), and the worker goes on', async () => {
    const totals = new RtpStreamTotals();
    const lost: string[] = [];
    const stream = await open(totals, [], lost);
    const bad = new SrtpSession({ suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: new Uint8Array(7) }, key('AES_CM_128_HMAC_SHA1_80'));
    stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: 9, direction: 'sendrecv', protection: bad });
    await waitFor(() => lost.length === 1, 'the stream to end');
    assert.ok(workers.pool.loads()[0].running);
    assert.equal(workers.pool.loads()[0].restarts, 0);
    const next = await open(totals, [], lost);
    next.close();
  });
});
