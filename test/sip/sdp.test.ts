import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptAnswer, answerDirection, answerOffer, buildOffer, readSdp, type LocalMedia } from '../../src/sip/sdp/index.ts';

const sdp = (...lines: string[]) => lines.join('\r\n') + '\r\n';

const LOCAL: LocalMedia = { address: '192.0.2.10', port: 10000, codecs: ['ulaw', 'alaw'], sessionId: '42', sessionVersion: 7 };

// A typical desk phone offer: PCMA preferred, PCMU, G.722, telephone-event at 96, session-level c=.
const PHONE_OFFER = sdp(
  'v=0',
  'o=phone 8000 8000 IN IP4 198.51.100.7',
  's=SIP Call',
  'c=IN IP4 198.51.100.7',
  't=0 0',
  'm=audio 40000 RTP/AVP 8 0 9 96',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:96 telephone-event/8000',
  'a=fmtp:96 0-15',
  'a=ptime:30',
  'a=sendrecv',
);

describe('buildOffer', () => {
  test('writes codecs in order, telephone-event 101 0-16, ptime 20 and the direction', () => {
    assert.equal(
      buildOffer({ ...LOCAL, direction: 'sendonly' }),
      sdp(
        'v=0',
        'o=Patchbay 42 7 IN IP4 192.0.2.10',
        's=Patchbay',
        'c=IN IP4 192.0.2.10',
        't=0 0',
        'm=audio 10000 RTP/AVP 0 8 101',
        'a=rtpmap:0 PCMU/8000',
        'a=rtpmap:8 PCMA/8000',
        'a=rtpmap:101 telephone-event/8000',
        'a=fmtp:101 0-16',
        'a=rtcp:10001',
        'a=ptime:20',
        'a=sendonly',
      ),
    );
  });

  test('IPv6, no telephone-event, alaw first', () => {
    const offer = buildOffer({ address: '2001:db8::5', port: 5004, codecs: ['alaw'], telephoneEvent: false, sessionId: '1' });
    assert.match(offer, /o=Patchbay 1 1 IN IP6 2001:db8::5\r\n/);
    assert.match(offer, /c=IN IP6 2001:db8::5\r\nt=0 0\r\nm=audio 5004 RTP\/AVP 8\r\na=rtpmap:8 PCMA\/8000\r\na=rtcp:5005\r\na=ptime:20\r\na=sendrecv\r\n$/);
  });
});

describe('sdp_owner, sdp_session and use_ptime', () => {
  test('owner and sessionName replace the o= user and s= line; the owner loses spaces, an empty s= is a space', () => {
    const offer = buildOffer({ ...LOCAL, owner: 'pbx', sessionName: 'Call Centre' });
    assert.match(offer, /^v=0\r\no=pbx 42 7 IN IP4 192\.0\.2\.10\r\ns=Call Centre\r\n/);
    assert.match(buildOffer({ ...LOCAL, owner: 'a b', sessionName: '' }), /^v=0\r\no=ab 42 7 IN IP4 192\.0\.2\.10\r\ns= \r\n/);
    assert.match(buildOffer({ ...LOCAL, owner: '' }), /^v=0\r\no=- 42 7 /);
  });

  test("answerPtime local: the answer carries our 20 whatever the offer's 30; offer: the offer's", () => {
    const local = answerOffer(PHONE_OFFER, { ...LOCAL, answerPtime: 'local' });
    assert.ok(local.ok);
    assert.match(local.sdp, /a=ptime:20\r\n/);
    assert.equal(local.media.ptime, 30, 'what the far end asked for is still known');
    const offer = answerOffer(PHONE_OFFER, { ...LOCAL, answerPtime: 'offer' });
    assert.ok(offer.ok);
    assert.match(offer.sdp, /a=ptime:30\r\n/);
    const noPtime = answerOffer(PHONE_OFFER.replace('a=ptime:30\r\n', ''), { ...LOCAL, answerPtime: 'offer' });
    assert.ok(noPtime.ok);
    assert.match(noPtime.sdp, /a=ptime:20\r\n/);
  });
});

describe('answerOffer', () => {
  test('our order by default, remote payload types kept, telephone-event with the remote pt, remote ptime', () => {
    const result = answerOffer(PHONE_OFFER, LOCAL);
    assert.ok(result.ok);
    assert.deepEqual(result.media, {
      remoteAddress: '198.51.100.7',
      remotePort: 40000,
      remoteRtcpPort: 40001,
      codec: 'ulaw',
      payloadType: 0,
      clockRate: 8000,
      telephoneEventPt: 96,
      direction: 'sendrecv',
      ptime: 30,
      codecs: [
        { codec: 'ulaw', payloadType: 0 },
        { codec: 'alaw', payloadType: 8 },
      ],
      mediaIndex: 0,
      rtcpMux: false,
    });
    assert.match(result.sdp, /m=audio 10000 RTP\/AVP 0 8 96\r\n/);
    assert.match(result.sdp, /a=rtpmap:96 telephone-event\/8000\r\na=fmtp:96 0-16\r\na=rtcp:10001\r\na=ptime:30\r\na=sendrecv\r\n$/);
    assert.doesNotMatch(result.sdp, /G722/);
  });

  test("prefer: 'remote' takes the offer's order", () => {
    const result = answerOffer(PHONE_OFFER, { ...LOCAL, prefer: 'remote' });
    assert.ok(result.ok);
    assert.equal(result.media.codec, 'alaw');
    assert.match(result.sdp, /m=audio 10000 RTP\/AVP 8 0 96\r\n/);
  });

  test('directions mirror: sendonly↔recvonly, inactive, and our own wish', () => {
    const withDirection = (direction: string) => PHONE_OFFER.replace('a=sendrecv', `a=${direction}`);
    const cases: Array<[string, LocalMedia['direction'], string]> = [
      ['sendonly', 'sendrecv', 'recvonly'],
      ['recvonly', 'sendrecv', 'sendonly'],
      ['inactive', 'sendrecv', 'inactive'],
      ['sendrecv', 'sendonly', 'sendonly'],
      ['sendonly', 'sendonly', 'inactive'],
    ];
    for (const [offered, wanted, expected] of cases) {
      const result = answerOffer(withDirection(offered), { ...LOCAL, direction: wanted });
      assert.ok(result.ok);
      assert.equal(result.media.direction, expected, `${offered} with ${wanted}`);
      assert.match(result.sdp, new RegExp(`a=${expected}\\r\\n$`));
    }
    assert.equal(answerDirection('sendonly'), 'recvonly');
    // Session-level direction applies to media without their own.
    const sessionLevel = PHONE_OFFER.replace('a=sendrecv\r\n', '').replace('t=0 0\r\n', 't=0 0\r\na=sendonly\r\n');
    const result = answerOffer(sessionLevel, LOCAL);
    assert.equal(result.ok && result.media.direction, 'recvonly');
  });

  test('unsupported lines get port 0; media-level c= wins; static payload types without rtpmap', () => {
    const offer = sdp(
      'v=0',
      'o=- 1 1 IN IP6 2001:db8::9',
      's=-',
      'c=IN IP6 2001:db8::9',
      't=0 0',
      'm=video 5000 RTP/AVP 96',
      'a=rtpmap:96 H264/90000',
      'm=audio 6000 RTP/SAVP 0',
      'm=audio 7000 RTP/AVP 18 0',
      'c=IN IP4 203.0.113.5',
      'a=rtcp:7101',
      'm=audio 8000 RTP/AVP 8',
      'm=image 9000 udptl t38',
    );
    const result = answerOffer(offer, LOCAL);
    assert.ok(result.ok);
    assert.equal(result.media.mediaIndex, 2);
    assert.equal(result.media.remoteAddress, '203.0.113.5');
    assert.equal(result.media.remoteRtcpPort, 7101);
    assert.equal(result.media.codec, 'ulaw');
    assert.equal(result.media.telephoneEventPt, undefined);
    const mLines = result.sdp.split('\r\n').filter((line) => line.startsWith('m='));
    assert.deepEqual(mLines, ['m=video 0 RTP/AVP 96', 'm=audio 0 RTP/SAVP 0', 'm=audio 10000 RTP/AVP 0', 'm=audio 0 RTP/AVP 8', 'm=image 0 udptl t38']);
    // The answer is itself readable SDP with the same number of lines.
    const reread = readSdp(result.sdp);
    assert.ok(reread.ok);
    assert.equal(reread.session.media.length, 5);
  });

  test('dynamic payload type for PCMU, missing c=, hold address, offered port 0', () => {
    const dynamic = sdp('v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', 't=0 0', 'm=audio 4000 RTP/AVP 97', 'a=rtpmap:97 pcmu/8000');
    const noC = answerOffer(dynamic, LOCAL);
    assert.ok(noC.ok);
    assert.equal(noC.media.payloadType, 97);
    assert.equal(noC.media.remoteAddress, undefined);
    const hold = answerOffer(PHONE_OFFER.replace('c=IN IP4 198.51.100.7', 'c=IN IP4 0.0.0.0'), LOCAL);
    assert.ok(hold.ok);
    assert.equal(hold.media.remoteAddress, undefined);
    const hostname = answerOffer(PHONE_OFFER.replace('c=IN IP4 198.51.100.7', 'c=IN IP4 pbx.example.com'), LOCAL);
    assert.equal(hostname.ok && hostname.media.remoteAddress, undefined);
    const mismatch = answerOffer(PHONE_OFFER.replace('c=IN IP4 198.51.100.7', 'c=IN IP6 198.51.100.7'), LOCAL);
    assert.equal(mismatch.ok && mismatch.media.remoteAddress, undefined);
    const portZero = answerOffer(PHONE_OFFER.replace('m=audio 40000', 'm=audio 0'), LOCAL);
    assert.deepEqual(portZero, { ok: false, status: 488, reason: 'no audio stream with a codec in common' });
  });

  test('nothing in common → 488; unusable bodies → 400', () => {
    const g722Only = answerOffer(PHONE_OFFER.replace('m=audio 40000 RTP/AVP 8 0 9 96', 'm=audio 40000 RTP/AVP 9 96'), LOCAL);
    assert.equal(!g722Only.ok && g722Only.status, 488);
    const wrongRate = answerOffer(PHONE_OFFER.replace('m=audio 40000 RTP/AVP 8 0 9 96', 'm=audio 40000 RTP/AVP 97').concat('a=rtpmap:97 PCMU/16000\r\n'), LOCAL);
    assert.equal(!wrongRate.ok && wrongRate.status, 488);
    for (const body of [undefined, '', 'hello', 'v=0\r\n', PHONE_OFFER.replace('40000', '70000'), PHONE_OFFER.replace('8 0 9 96', '8 0 200'), 'x'.repeat(40_000)]) {
      const result = answerOffer(body, LOCAL);
      assert.equal(!result.ok && result.status, 400, String(body).slice(0, 40));
    }
  });

  test('hostile SDP never throws', () => {
    let seed = 99;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const alphabet = '0123456789 =:/\r\n-aAmcvIPtrRT\u0000\u00ff\uffff';
    for (let round = 0; round < 3000; round++) {
      const chars = [...PHONE_OFFER];
      const edits = 1 + Math.floor(random() * 6);
      for (let k = 0; k < edits; k++) {
        const at = Math.floor(random() * chars.length);
        const choice = random();
        if (choice < 0.4) chars[at] = alphabet[Math.floor(random() * alphabet.length)];
        else if (choice < 0.7) chars.splice(at, 1);
        else chars.splice(at, 0, ...chars.slice(Math.floor(random() * chars.length), Math.floor(random() * chars.length)));
      }
      const body = chars.join('');
      answerOffer(body, LOCAL);
      acceptAnswer(body, LOCAL);
    }
    answerOffer(new Uint8Array([0xff, 0xfe, 0x00]), LOCAL);
    answerOffer('v=0\r\n' + 'm=audio 1 RTP/AVP 0\r\n'.repeat(20), LOCAL);
    answerOffer('v=0\r\nm=audio 1 RTP/AVP ' + '0 '.repeat(100) + '\r\n', LOCAL);
    answerOffer('v=0\r\na=rtpmap:0 PCMU/8000\r\n'.repeat(600), LOCAL);
  });
});

describe('acceptAnswer', () => {
  test('the far end chooses; its payload types and ptime are taken', () => {
    const answer = sdp(
      'v=0',
      'o=- 5 5 IN IP4 198.51.100.20',
      's=-',
      'c=IN IP4 198.51.100.20',
      't=0 0',
      'm=audio 30000 RTP/AVP 8 101',
      'a=rtpmap:8 PCMA/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=ptime:20',
      'a=recvonly',
    );
    const result = acceptAnswer(answer, LOCAL);
    assert.ok(result.ok);
    assert.equal(result.media.codec, 'alaw');
    assert.equal(result.media.payloadType, 8);
    assert.equal(result.media.telephoneEventPt, 101);
    assert.equal(result.media.direction, 'sendonly');
    assert.equal(result.media.remoteAddress, '198.51.100.20');
    assert.equal(result.media.remotePort, 30000);
  });

  test('refused stream, unknown codec, wrong m= count and garbage are failures', () => {
    const base = (m: string, extra = '') => sdp('v=0', 'o=- 5 5 IN IP4 198.51.100.20', 's=-', 'c=IN IP4 198.51.100.20', 't=0 0', m) + extra;
    assert.equal(acceptAnswer(base('m=audio 0 RTP/AVP 0'), LOCAL).ok, false);
    assert.equal(acceptAnswer(base('m=audio 3000 RTP/AVP 9'), LOCAL).ok, false);
    assert.equal(acceptAnswer(base('m=audio 3000 RTP/AVP 0', 'm=video 0 RTP/AVP 96\r\n'), LOCAL).ok, false);
    assert.equal(acceptAnswer('garbage', LOCAL).ok, false);
    assert.equal(acceptAnswer(base('m=audio 3000 RTP/AVP 0'), LOCAL).ok, true);
  });
});

describe('RTCP port and multiplexing (RFC 3605, RFC 5761)', () => {
  const MUX_OFFER = PHONE_OFFER.replace('a=sendrecv\r\n', 'a=sendrecv\r\na=rtcp-mux\r\n');

  test('an offer of rtcp-mux is accepted only by an endpoint with rtcp_mux: RTCP then goes to the RTP port both ways', () => {
    const plain = answerOffer(MUX_OFFER, LOCAL);
    assert.ok(plain.ok);
    assert.equal(plain.media.rtcpMux, false);
    assert.equal(plain.media.remoteRtcpPort, 40001);
    assert.doesNotMatch(plain.sdp, /rtcp-mux/);
    assert.match(plain.sdp, /a=rtcp:10001\r\n/);
    const mux = answerOffer(MUX_OFFER, { ...LOCAL, rtcpMux: true });
    assert.ok(mux.ok);
    assert.equal(mux.media.rtcpMux, true);
    assert.equal(mux.media.remoteRtcpPort, 40000);
    assert.match(mux.sdp, /a=rtcp:10000\r\n/);
    assert.match(mux.sdp, /a=rtcp-mux\r\n/);
    // Without the far end's a=rtcp-mux nothing is multiplexed.
    const notOffered = answerOffer(PHONE_OFFER, { ...LOCAL, rtcpMux: true });
    assert.ok(notOffered.ok);
    assert.equal(notOffered.media.rtcpMux, false);
    assert.doesNotMatch(notOffered.sdp, /rtcp-mux/);
  });

  test('our offer with rtcp_mux keeps port + 1 as the fallback; the answer decides', () => {
    const offer = buildOffer({ ...LOCAL, rtcpMux: true });
    assert.match(offer, /a=rtcp:10001\r\n/);
    assert.match(offer, /a=rtcp-mux\r\n/);
    const withMux = acceptAnswer(sdp('v=0', 'o=x 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtcp-mux'), { ...LOCAL, rtcpMux: true });
    assert.ok(withMux.ok);
    assert.equal(withMux.media.rtcpMux, true);
    assert.equal(withMux.media.remoteRtcpPort, 40000);
    const explicitPort = acceptAnswer(sdp('v=0', 'o=x 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtcp:40011'), { ...LOCAL, rtcpMux: true });
    assert.ok(explicitPort.ok);
    assert.equal(explicitPort.media.rtcpMux, false);
    assert.equal(explicitPort.media.remoteRtcpPort, 40011);
  });
});
