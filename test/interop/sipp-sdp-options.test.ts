// The endpoint options that shape the SDP answer and the RTP socket, against SIPp as a video phone
// whose offer carries an audio line asking a=ptime:30, a second audio line and a video line:
//   defaults              o= user '-', s=Patchbay, a=ptime:20 (ours, use_ptime=no), the second audio
//                         line and the video line declined with port 0 (max_audio_streams=1; no video)
//   sdp_owner, sdp_session, use_ptime=yes
//                         o=pbx, s=Call Centre, a=ptime:30 (the offer's)
//   media_address=127.0.0.9 with bind_rtp_to_media_address=yes
//                         c= names 127.0.0.9 and the call's RTP (rtp_keepalive's comfort noise)
//                         leaves from 127.0.0.9, read on a socket of the test the offer names.
// The answer is read from SIPp's message trace; the app hangs up and SIPp answers the BYE.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, ofChannel, sipp, startSippServer, tracedMessages, type SippServer } from './sipp-peer.ts';

const APP = 'sdp-options';
let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sdp-options', `[sdp-in]\nexten => 100,1,Stasis(${APP})\n`, {
    endpoint: {
      plain: { context: 'sdp-in', allow: 'ulaw' },
      named: { context: 'sdp-in', allow: 'ulaw', sdp_owner: 'pbx', sdp_session: 'Call Centre', use_ptime: 'yes' },
      bound: { context: 'sdp-in', allow: 'ulaw', media_address: '127.0.0.9', bind_rtp_to_media_address: 'yes', rtp_keepalive: '1' },
    },
  }, APP);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** A socket of the test's that the phone's SDP names; the source of the first packet to reach it. */
async function mediaSocket() {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const first = new Promise<dgram.RemoteInfo>((resolve) => socket.once('message', (_message, source) => resolve(source)));
  return { socket, first, port: socket.address().port };
}

/** A call from `caller` answered by the app, `during` run while it is up, hung up by the app; the 200 OK's SDP. */
async function call(caller: string, sdpPort: number, during: () => Promise<void> = async () => undefined): Promise<string> {
  const run = sipp('call-streams-sdp-port-wait-bye.xml', [peer.target(), '-s', '100', '-set', 'caller', caller, '-set', 'sdp_port', String(sdpPort)], { cwd: peer.work, timeoutMs: 60_000, trace: true });
  const start = await nextEvent(peer.events, (event) => event.type === 'StasisStart' && String(event.channel?.name).startsWith(`PJSIP/${caller}-`), 30_000);
  const id = start.channel.id as string;
  assert.equal((await peer.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  await during();
  assert.equal((await peer.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  await nextEvent(peer.events, ofChannel('ChannelDestroyed', id), 30_000);
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  const [ok] = tracedMessages(result, /^SIP\/2\.0 200 OK/).filter((message) => /\r?\nv=0\r?\n/.test(message));
  assert.ok(ok, 'the 200 OK to the INVITE carried an SDP answer');
  return ok.slice(ok.search(/\r?\nv=0\r?\n/)).trim();
}

const line = (sdp: string, prefix: string): string[] => sdp.split(/\r?\n/).filter((text) => text.startsWith(prefix));

describe('endpoint SDP options answering a video phone (two audio lines, one video line, a=ptime:30)', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test("defaults: o= user '-', s=Patchbay, our a=ptime:20, the second audio line and the video line declined with port 0", { timeout: 120_000 }, async () => {
    const answer = await call('plain', 40000);
    assert.match(line(answer, 'o=')[0] ?? '', /^o=- \d+ \d+ IN IP4 /);
    assert.deepEqual(line(answer, 's='), ['s=Patchbay']);
    assert.deepEqual(line(answer, 'a=ptime:'), ['a=ptime:20']);
    const media = line(answer, 'm=');
    assert.equal(media.length, 3, 'one answer line per offered line');
    assert.match(media[0], /^m=audio [1-9]\d* RTP\/AVP 0 101$/);
    assert.match(media[1], /^m=audio 0 RTP\/AVP 8$/);
    assert.match(media[2], /^m=video 0 RTP\/AVP 96$/);
  });

  test("sdp_owner=pbx, sdp_session=Call Centre, use_ptime=yes: o=pbx, s=Call Centre, the offer's a=ptime:30", { timeout: 120_000 }, async () => {
    const answer = await call('named', 40000);
    assert.match(line(answer, 'o=')[0] ?? '', /^o=pbx \d+ \d+ IN IP4 /);
    assert.deepEqual(line(answer, 's='), ['s=Call Centre']);
    assert.deepEqual(line(answer, 'a=ptime:'), ['a=ptime:30']);
  });

  test('bind_rtp_to_media_address=yes with media_address=127.0.0.9: c= names it and the RTP leaves from it', { timeout: 120_000 }, async () => {
    const media = await mediaSocket();
    try {
      let source: dgram.RemoteInfo | undefined;
      const answer = await call('bound', media.port, async () => {
        source = await media.first;
      });
      assert.deepEqual(line(answer, 'c='), ['c=IN IP4 127.0.0.9']);
      assert.equal(source?.address, '127.0.0.9', 'the RTP socket is bound to media_address');
      const port = /^m=audio (\d+) /.exec(line(answer, 'm=audio')[0] ?? '')?.[1];
      assert.equal(String(source?.port), port, 'from the port the answer names');
    } finally {
      media.socket.close();
    }
  });
});
