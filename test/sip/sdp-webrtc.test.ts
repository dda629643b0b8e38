// The SDP of WebRTC calls (src/sip/sdp/webrtc.ts with offer-answer.ts): a browser's offer of audio
// and video bundled is answered with the audio alone in the BUNDLE group, ICE-lite, our ICE
// credentials, candidates, fingerprint and setup:active; the video is refused with port 0 and its
// mid; a plain RTP/AVP offer is not secured media; hostile attribute values are not taken.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'sdp-transform';
import { acceptAnswer, answerOffer, buildOffer, type LocalMedia } from '../../src/sip/sdp/index.ts';
import { readSdp } from '../../src/sip/sdp/session.ts';
import { dtlsRole } from '../../src/sip/sdp/webrtc.ts';

const FINGERPRINT = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase()).join(':');

const chromeOffer = [
  'v=0', 'o=- 4611731400430051336 2 IN IP4 127.0.0.1', 's=-', 't=0 0',
  'a=group:BUNDLE 0 1', 'a=extmap-allow-mixed', 'a=msid-semantic: WMS stream',
  'm=audio 50000 UDP/TLS/RTP/SAVPF 111 0 8 126', 'c=IN IP4 127.0.0.1', 'a=rtcp:9 IN IP4 0.0.0.0',
  'a=candidate:1 1 udp 2113937151 127.0.0.1 50000 typ host generation 0',
  'a=candidate:2 1 udp 2113937151 4c7d0d3f-1a2b.local 50002 typ host generation 0',
  'a=ice-ufrag:Ab12', 'a=ice-pwd:abcdefghijklmnopqrstuvwx', 'a=ice-options:trickle',
  `a=fingerprint:sha-256 ${FINGERPRINT}`, 'a=setup:actpass', 'a=mid:0', 'a=sendrecv', 'a=msid:stream track',
  'a=rtcp-mux', 'a=rtpmap:111 opus/48000/2', 'a=rtcp-fb:111 transport-cc', 'a=fmtp:111 minptime=10;useinbandfec=1',
  'a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:126 telephone-event/8000', 'a=ssrc:1 cname:x',
  'm=video 9 UDP/TLS/RTP/SAVPF 96', 'c=IN IP4 0.0.0.0', 'a=ice-ufrag:Ab12', 'a=ice-pwd:abcdefghijklmnopqrstuvwx',
  `a=fingerprint:sha-256 ${FINGERPRINT}`, 'a=setup:actpass', 'a=mid:1', 'a=rtcp-mux', 'a=rtpmap:96 VP8/90000', '',
].join('\r\n');

const local: LocalMedia = {
  address: '127.0.0.1',
  port: 20000,
  codecs: ['ulaw', 'alaw'],
  secure: { iceUfrag: 'ourufrag', icePwd: 'ourpasswordourpassword12', fingerprint: `sha-256 ${FINGERPRINT}`, setup: 'actpass', candidates: [{ address: '127.0.0.1', port: 20000 }, { address: '203.0.113.5', port: 20000 }], avpf: true },
};

test("a browser's offer is answered with bundled, secured audio and the video refused", () => {
  const answer = answerOffer(chromeOffer, local);
  assert.ok(answer.ok, JSON.stringify(answer));
  const sdp = parse(answer.sdp);
  assert.equal(sdp.icelite, 'ice-lite');
  assert.deepEqual(sdp.groups?.map((group) => `${group.type} ${group.mids}`), ['BUNDLE 0']);
  const [audio, video] = sdp.media;
  assert.equal(audio!.protocol, 'UDP/TLS/RTP/SAVPF');
  assert.equal(audio!.port, 20000);
  assert.equal(audio!.setup, 'active');
  assert.equal(String(audio!.mid), '0');
  assert.equal(audio!.rtcpMux, 'rtcp-mux');
  assert.equal(audio!.iceUfrag, 'ourufrag');
  assert.equal(audio!.fingerprint?.hash, FINGERPRINT);
  assert.deepEqual(audio!.candidates?.map((c) => `${c.ip}:${c.port} ${c.type}`), ['127.0.0.1:20000 host', '203.0.113.5:20000 host']);
  assert.deepEqual(audio!.rtp.map((r) => r.codec), ['PCMU', 'PCMA', 'telephone-event']);
  assert.equal(video!.port, 0);
  assert.equal(String(video!.mid), '1');
  // What the call takes from it: the far end's credentials, fingerprint, setup and usable candidates.
  const security = answer.media.security!;
  assert.equal(security.setup, 'active');
  assert.equal(security.remote.iceUfrag, 'Ab12');
  assert.equal(security.remote.setup, 'actpass');
  assert.deepEqual(security.remote.fingerprint, { algorithm: 'sha-256', value: FINGERPRINT });
  assert.deepEqual(security.remote.candidates, [{ address: '127.0.0.1', port: 50000 }], 'an mDNS name is no address');
  assert.equal(answer.media.rtcpMux, true);
  assert.equal(dtlsRole(security.setup, security.remote.setup), 'client');
});

test('a plain RTP/AVP offer is not secured media (488); a secured one to a plain endpoint neither', () => {
  const plain = chromeOffer.replace(/UDP\/TLS\/RTP\/SAVPF/g, 'RTP/AVP');
  const refused = answerOffer(plain, local);
  assert.equal(refused.ok, false);
  assert.equal(!refused.ok && refused.status, 488);
  const { secure: _secure, ...plainLocal } = local;
  assert.equal(answerOffer(chromeOffer, plainLocal).ok, false);
});

test('our offer says actpass, ICE-lite and BUNDLE; the answer settles our DTLS role', () => {
  const offer = parse(buildOffer(local));
  assert.equal(offer.icelite, 'ice-lite');
  assert.equal(offer.media[0]!.setup, 'actpass');
  assert.equal(offer.media[0]!.protocol, 'UDP/TLS/RTP/SAVPF');
  const browserAnswer = chromeOffer.split('m=video')[0]!.replace('a=setup:actpass', 'a=setup:active').replace('a=group:BUNDLE 0 1', 'a=group:BUNDLE 0');
  const accepted = acceptAnswer(browserAnswer, local);
  assert.ok(accepted.ok);
  assert.equal(dtlsRole(accepted.media.security!.setup, accepted.media.security!.remote.setup), 'server');
});

test('hostile ICE and DTLS values are not taken', () => {
  const hostile = chromeOffer
    .replace('a=ice-ufrag:Ab12', 'a=ice-ufrag:a b\u0000')
    .replace(`a=fingerprint:sha-256 ${FINGERPRINT}`, 'a=fingerprint:md5 zz:zz')
    .replace('a=setup:actpass', 'a=setup:sideways')
    .replace('a=mid:0', `a=mid:${'x'.repeat(100)}`);
  const read = readSdp(hostile);
  assert.ok(read.ok);
  const security = read.session.media[0]!.security;
  assert.equal(security.iceUfrag, undefined);
  assert.equal(security.fingerprint, undefined);
  assert.equal(security.setup, undefined);
  assert.equal(security.mid, undefined);
});

test('force_avp: our offer and answer name RTP/SAVPF, and an offer naming RTP/SAVPF with a fingerprint is taken as DTLS', () => {
  const forced: LocalMedia = { ...local, secure: { ...local.secure!, forceAvp: true } };
  assert.equal(parse(buildOffer(forced)).media[0]!.protocol, 'RTP/SAVPF');
  assert.equal(parse(buildOffer({ ...forced, secure: { ...forced.secure!, avpf: false } })).media[0]!.protocol, 'RTP/SAVP');
  const answered = answerOffer(chromeOffer, forced);
  assert.ok(answered.ok);
  assert.equal(parse(answered.sdp).media[0]!.protocol, 'RTP/SAVPF');
  const avpOffer = answerOffer(chromeOffer.replace(/UDP\/TLS\/RTP\/SAVPF/g, 'RTP/SAVPF'), forced);
  assert.ok(avpOffer.ok, JSON.stringify(avpOffer));
  assert.equal(avpOffer.media.security?.setup, 'active');
  // Without force_avp, RTP/SAVPF is no DTLS line.
  assert.equal(answerOffer(chromeOffer.replace(/UDP\/TLS\/RTP\/SAVPF/g, 'RTP/SAVPF'), local).ok, false);
});
