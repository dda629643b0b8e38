// rtp_keepalive against SIPp: a phone whose call carries no audio either way (an app that answered
// and plays nothing) gets one comfort-noise packet on the media port its SDP named every
// rtp_keepalive seconds, as res_rtp_asterisk sends its keepalive: RFC 3389 payload type 13, the
// marker set, one payload byte of level 127 (-127 dBov), one SSRC, consecutive sequence numbers.
// The SDP names a socket of the test's, so the packets are read as they arrive on the wire. An
// endpoint without rtp_keepalive sends nothing on the same silent call.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, nextEvent, ofChannel, sipp, startSippServer, type SippServer } from './sipp-peer.ts';

let peer: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;
let target: () => string;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('rtp-keepalive', '[ka-in]\nexten => 100,1,Stasis(ka-app)\n', {
    endpoint: {
      kept: { context: 'ka-in', allow: 'ulaw', rtp_keepalive: '1' },
      plain: { context: 'ka-in', allow: 'ulaw' },
    },
  }, 'ka-app');
  ({ work, server, events, target } = peer);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** A socket of the test's that the phone's SDP names; the RTP packets that reach it, as they come. */
async function mediaSocket() {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const packets: Buffer[] = [];
  let wake: (() => void) | undefined;
  socket.on('message', (message) => {
    if (packets.length < 64) packets.push(Buffer.from(message));
    wake?.();
  });
  /** Waits until `count` packets came, within `timeoutMs`. */
  const received = async (count: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (packets.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${packets.length} of ${count} packets within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return { socket, packets, received, port: () => socket.address().port };
}

/** A call from `caller` (SIPp, no RTP ever, its SDP naming `sdpPort`) answered by the app. */
async function silentCall(caller: string, sdpPort: number) {
  const run = sipp('call-silent-sdp-port-wait-bye.xml', [target(), '-s', '100', '-set', 'caller', caller, '-set', 'sdp_port', String(sdpPort)], { cwd: work, timeoutMs: 40_000 });
  const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith(`PJSIP/${caller}-`), 15_000);
  const id = start.channel.id as string;
  assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  return { id, run };
}

async function hangUp(id: string, run: ReturnType<typeof sipp>) {
  assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  await nextEvent(events, ofChannel('ChannelDestroyed', id), 15_000);
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
}

describe('rtp_keepalive with SIPp as a phone on a silent call', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test('rtp_keepalive=1: a comfort-noise packet (PT 13, marker, level 127) each second of silence, one SSRC, consecutive sequence numbers', { timeout: 90_000 }, async () => {
    const media = await mediaSocket();
    try {
      const { id, run } = await silentCall('kept', media.port());
      await media.received(3, 30_000);
      const [first, second, third] = media.packets;
      for (const packet of [first, second, third]) {
        assert.equal(packet.length, 13, 'a 12-byte RTP header and one byte of noise level');
        assert.equal(packet[0] >> 6, 2, 'RTP version 2');
        assert.equal(packet[1] & 0x80, 0x80, 'the marker is set');
        assert.equal(packet[1] & 0x7f, 13, 'comfort noise (RFC 3389)');
        assert.equal(packet[12], 127, 'level 127: -127 dBov');
        assert.equal(packet.readUInt32BE(8), first.readUInt32BE(8), 'one SSRC');
      }
      assert.equal(second.readUInt16BE(2), (first.readUInt16BE(2) + 1) % 65536);
      assert.equal(third.readUInt16BE(2), (second.readUInt16BE(2) + 1) % 65536);
      // The RTP clock (8 kHz) says how far apart they were sent: a second at least (the media clock's ticks, not wall time).
      assert.ok(((second.readUInt32BE(4) - first.readUInt32BE(4)) >>> 0) >= 8000, 'a second apart on the RTP clock');
      assert.ok(((third.readUInt32BE(4) - second.readUInt32BE(4)) >>> 0) >= 8000, 'a second apart on the RTP clock');
      await hangUp(id, run);
    } finally {
      media.socket.close();
    }
  });

  test('no rtp_keepalive (the default 0): nothing reaches the phone on the same silent call', { timeout: 90_000 }, async () => {
    const media = await mediaSocket();
    try {
      const { id, run } = await silentCall('plain', media.port());
      // An absence: waited for longer than two keepalive intervals of the test above.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.equal(media.packets.length, 0, 'no packet on a silent call without rtp_keepalive');
      await hangUp(id, run);
    } finally {
      media.socket.close();
    }
  });
});
