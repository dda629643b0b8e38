// WebRTC media of a stream that runs in a media worker (issue 25), against a peer built here as a
// browser behaves: the worker answers its ICE checks with the credentials the main thread made (and
// tells the main thread the pair), the DTLS handshake runs on the main thread with its records
// carried to and from the worker's socket, the exported keys reach the worker, and SRTP flows both
// ways — encrypted on the wire, forged packets refused and counted. A certificate that does not
// match the SDP fingerprint fails the media. The worker's socket on its own: DTLS from a stranger,
// oversized or beyond the rate is not forwarded; nothing is sent before the keys.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { linearToUlaw, ulawToLinear } from '../../../src/media/g711.ts';
import { RtpStreamTotals } from '../../../src/media/rtp/stream.ts';
import { SrtpSession } from '../../../src/media/srtp/session.ts';
import { generateDtlsIdentity, type DtlsIdentity } from '../../../src/media/webrtc/dtls-identity.ts';
import { RemoteSecureMedia } from '../../../src/media/workers/remote-secure-media.ts';
import type { RemoteRtpStream } from '../../../src/media/workers/remote-stream.ts';
import { MAX_DTLS_RECORD_BYTES, WorkerSecureSocket } from '../../../src/media/workers/worker-secure-socket.ts';
import { bindingRequest, browserLikePeer, peerCertificate, peerSrtpSession, protectedCopy, type PeerCertificate } from '../../helpers/browser-like-peer.ts';
import { loopbackSocket, openWhenReady, randomPortBase, useWorkerPool, waitFor } from './worker-fixture.ts';

const PORT_BASE = randomPortBase(36_000, 2_000);

function rtpPacket(sequence: number, value: number): Buffer {
  const packet = Buffer.alloc(172, linearToUlaw(value));
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  packet.writeUInt32BE(0x1234, 8);
  return packet;
}

let identity: DtlsIdentity;
let peerCert: PeerCertificate;
before(async () => {
  identity = await generateDtlsIdentity();
  peerCert = await peerCertificate();
});

describe('WebRTC in a media worker', () => {
  const workers = useWorkerPool(1);

  async function open(secure: RemoteSecureMedia, totals: RtpStreamTotals, frames: number[]): Promise<RemoteRtpStream> {
    const request = {
      host: '127.0.0.1',
      portStart: PORT_BASE,
      portEnd: PORT_BASE + 500,
      options: { rtcpIntervalMs: 500 },
      totals,
      secure,
      events: { onFrame: (frame: Frame) => frames.push(frame.samples[80]), onDigit: () => undefined, onLost: () => undefined },
    };
    return openWhenReady(workers.pool, request);
  }

  test('ICE in the worker, DTLS on the main thread, SRTP both ways in the worker', { timeout: 60_000 }, async () => {
    const failures: string[] = [];
    const secure = new RemoteSecureMedia(identity, { onFailure: (reason) => failures.push(reason) });
    const totals = new RtpStreamTotals();
    const frames: number[] = [];
    const stream = await open(secure, totals, frames);
    assert.equal(secure.boundAddress, '127.0.0.1');
    const peer = await browserLikePeer(secure.ice.local, stream.localPort, peerCert);
    try {
      stream.configure({ codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: 9, rtcpMux: true, direction: 'sendrecv' });
      // Before the keys the worker sends nothing, even with frames written.
      const tone = { rate: 8000 as const, samples: new Int16Array(160).fill(-2500) };
      for (let i = 0; i < 5; i++) {
        stream.writeFrame(tone);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(peer.received.length, 0, 'nothing before the keys');
      secure.configureRemote({ iceUfrag: 'peer', fingerprint: { algorithm: 'sha-256', value: peerCert.fingerprint }, role: 'server' });
      await waitFor(() => secure.selected !== undefined && secure.consented, 'the worker to tell the checked pair');
      assert.equal(secure.selected?.port, peer.socket.address().port);
      await peer.client.connect();
      await waitFor(() => secure.secured, 'the handshake');
      assert.deepEqual(failures, []);
      const peerSrtp = peerSrtpSession(peer.client);
      const protect = (packet: Buffer): Buffer => protectedCopy(peerSrtp, packet);
      let sequence = 1;
      const talking = setInterval(() => {
        peer.socket.send(protect(rtpPacket(sequence++, 1500)), stream.localPort, '127.0.0.1');
        stream.writeFrame(tone);
      }, 20);
      try {
        await waitFor(() => frames.filter((v) => v === ulawToLinear(linearToUlaw(1500))).length >= 20, 'the peer\'s audio on the main thread');
        await waitFor(() => peer.received.filter((p) => p[1] === 0).length >= 20, 'our SRTP at the peer');
      } finally {
        clearInterval(talking);
      }
      const audio = peer.received.filter((p) => p[1] === 0).slice(-10);
      for (const wire of audio) {
        assert.equal(wire.length, 182, 'SRTP with its 80-bit tag');
        assert.notEqual(wire.subarray(12, 172).toString('hex'), Buffer.alloc(160, linearToUlaw(-2500)).toString('hex'), 'encrypted on the wire');
        assert.equal(peerSrtp.unprotectRtp(wire, wire.length), 172);
        assert.ok(wire.subarray(12, 172).every((byte) => byte === linearToUlaw(-2500)));
      }
      const forged = protect(rtpPacket(sequence++, 4000));
      forged[forged.length - 1] ^= 0xff;
      peer.socket.send(forged, stream.localPort, '127.0.0.1');
      await waitFor(() => (stream.syncTotals(), totals.srtpRefusedPackets === 1), 'the forged packet refused and counted');
    } finally {
      stream.close();
      peer.socket.close();
    }
  });

  test('a DTLS certificate that does not match the SDP fingerprint fails the media', { timeout: 60_000 }, async () => {
    const failures: string[] = [];
    const secure = new RemoteSecureMedia(identity, { onFailure: (reason) => failures.push(reason) });
    const stream = await open(secure, new RtpStreamTotals(), []);
    const peer = await browserLikePeer(secure.ice.local, stream.localPort, peerCert);
    try {
      secure.configureRemote({ iceUfrag: 'peer', fingerprint: { algorithm: 'sha-256', value: Array(32).fill('AB').join(':') }, role: 'server' });
      void peer.client.connect().catch(() => undefined);
      await waitFor(() => failures.length > 0, 'the failure');
      assert.match(failures[0]!, /fingerprint/);
      assert.equal(secure.secured, false);
    } finally {
      stream.close();
      peer.socket.close();
    }
  });
});

test('the worker\'s socket forwards DTLS only from the checked pair, within size and rate, and sends nothing before the keys', async () => {
  const raw = await loopbackSocket();
  const records: Uint8Array[] = [];
  const told: string[] = [];
  const socket = new WorkerSecureSocket(raw, { ufrag: 'abcdefgh', pwd: 'abcdefghijklmnopqrstuvwx' }, {
    dtls: (record) => records.push(record),
    ice: (selected, consented) => told.push(`${selected?.port ?? '-'}:${consented}`),
  });
  const [peer, stranger] = await Promise.all([loopbackSocket(), loopbackSocket()]);
  const port = raw.address().port;
  const dtls = (bytes: number) => Buffer.alloc(bytes, 22);
  try {
    stranger.send(dtls(100), port, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(records.length, 0, 'no pair checked yet: not forwarded');
    peer.send(bindingRequest('abcdefgh:peer', 'abcdefghijklmnopqrstuvwx', { nominate: true }), port, '127.0.0.1');
    await waitFor(() => told.length === 1, 'the pair told');
    assert.deepEqual(told, [`${peer.address().port}:true`]);
    stranger.send(dtls(100), port, '127.0.0.1');
    peer.send(dtls(MAX_DTLS_RECORD_BYTES + 1), port, '127.0.0.1');
    for (let i = 0; i < 40; i++) peer.send(dtls(200), port, '127.0.0.1');
    await waitFor(() => socket.dropped >= 2 + 8, 'the stranger\'s, the oversized and the records beyond the rate dropped');
    assert.equal(records.length, 32, 'at most 32 records a second forwarded');
    assert.ok(records.every((record) => record.byteLength === 200 && record.buffer.byteLength === 200), 'each a copy of its own');
    const heard: Buffer[] = [];
    peer.on('message', (data) => heard.push(data));
    const packet = rtpPacket(1, 100);
    assert.equal(socket.protectRtp(packet, 172), 0, 'nothing protected before the keys');
    socket.send(packet, 0, 172, 9, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(heard.filter((data) => data[0]! >= 128).length, 0, 'nothing sent before the keys');
  } finally {
    socket.close();
    peer.close();
    stranger.close();
  }
});

test('the worker\'s socket stops sending when the far end\'s consent lapses (RFC 7675), tells the main thread, and sends again after a check', { timeout: 30_000 }, async () => {
  const raw = await loopbackSocket();
  const told: boolean[] = [];
  const socket = new WorkerSecureSocket(raw, { ufrag: 'abcdefgh', pwd: 'abcdefghijklmnopqrstuvwx' }, { dtls: () => undefined, ice: (_selected, consented) => told.push(consented) }, 400);
  const peer = await loopbackSocket();
  const suite = 'AES_CM_128_HMAC_SHA1_80' as const;
  const ours = { suite, keySalt: new Uint8Array(30).fill(1) };
  const theirs = { suite, keySalt: new Uint8Array(30).fill(2) };
  const far = new SrtpSession(theirs, ours);
  const heard: Buffer[] = [];
  peer.on('message', (data) => {
    if (data[0]! >= 128) heard.push(Buffer.from(data));
  });
  const send = (sequence: number): void => {
    const packet = Buffer.alloc(172 + 32);
    rtpPacket(sequence, 100).copy(packet);
    const length = socket.protectRtp(packet, 172);
    socket.send(packet, 0, length, 9, '127.0.0.1');
  };
  try {
    socket.key({ local: ours, remote: theirs });
    peer.send(bindingRequest('abcdefgh:peer', 'abcdefghijklmnopqrstuvwx', { nominate: true }), raw.address().port, '127.0.0.1');
    await waitFor(() => told.length === 1, 'the pair told');
    send(1);
    await waitFor(() => heard.length === 1, 'a packet sent while consent is fresh');
    assert.equal(far.unprotectRtp(heard[0]!, heard[0]!.length), 172, 'SRTP under the keys given');
    await new Promise((resolve) => setTimeout(resolve, 600));
    send(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(heard.length, 1, 'nothing sent once consent lapsed');
    assert.deepEqual(told, [true, false], 'the lapse told to the main thread');
    peer.send(bindingRequest('abcdefgh:peer', 'abcdefghijklmnopqrstuvwx', { nominate: true }), raw.address().port, '127.0.0.1');
    await waitFor(() => told.length === 3, 'the renewed consent told');
    assert.equal(told[2], true);
    send(3);
    await waitFor(() => heard.length === 2, 'sending again');
  } finally {
    socket.close();
    peer.close();
  }
});
