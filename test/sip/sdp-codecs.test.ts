import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acceptAnswer, answerOffer, buildOffer, offerCodecs, type LocalMedia } from '../../src/sip/sdp/index.ts';
import { readOpusFmtp } from '../../src/sip/sdp/opus-fmtp.ts';

const sdp = (...lines: string[]) => lines.join('\r\n') + '\r\n';
const LOCAL: LocalMedia = { address: '192.0.2.10', port: 10000, codecs: ['opus', 'g722', 'ulaw'], sessionId: '42', sessionVersion: 1 };

/** An offer as baresip makes it with its opus and g722 modules (dynamic payload type 96 for Opus). */
const SOFTPHONE_OFFER = sdp(
  'v=0',
  'o=- 1 2 IN IP4 198.51.100.7',
  's=-',
  'c=IN IP4 198.51.100.7',
  't=0 0',
  'm=audio 40000 RTP/AVP 96 9 0 101',
  'a=rtpmap:96 opus/48000/2',
  'a=fmtp:96 stereo=1;sprop-stereo=1;maxaveragebitrate=28000;useinbandfec=1;usedtx=0',
  'a=rtpmap:9 G722/8000',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:101 telephone-event/8000',
  'a=sendrecv',
);

describe('G.722 and Opus in SDP', () => {
  test('our offer: opus/48000/2 at 107 with useinbandfec=1 (as Asterisk), G722/8000 at 9, in allow= order; telephone-event at 8000 and, for Opus, 48000', () => {
    const offer = buildOffer(LOCAL);
    assert.match(offer, /^m=audio 10000 RTP\/AVP 107 9 0 101 100\r$/m);
    assert.match(offer, /^a=rtpmap:101 telephone-event\/8000\r$/m);
    assert.match(offer, /^a=rtpmap:100 telephone-event\/48000\r$/m);
    assert.match(offer, /^a=fmtp:100 0-16\r$/m);
    assert.doesNotMatch(buildOffer({ ...LOCAL, codecs: ['g722', 'ulaw'] }), /telephone-event\/48000/, 'no Opus, no 48 kHz events');
    assert.match(buildOffer({ ...LOCAL, telephoneEvent: 100 }), /^a=rtpmap:102 telephone-event\/48000\r$/m, 'beside 8 kHz events configured at 100');
    assert.match(offer, /^a=rtpmap:107 opus\/48000\/2\r$/m);
    assert.match(offer, /^a=fmtp:107 useinbandfec=1\r$/m);
    assert.match(offer, /^a=rtpmap:9 G722\/8000\r$/m);
    assert.match(offer, /^a=rtpmap:0 PCMU\/8000\r$/m);
  });

  test("answering a softphone: the offer's order and payload types, its Opus fmtp read for our encoder", () => {
    const answer = answerOffer(SOFTPHONE_OFFER, { ...LOCAL, prefer: 'remote' });
    assert.ok(answer.ok);
    assert.match(answer.sdp, /^m=audio 10000 RTP\/AVP 96 9 0 101\r$/m);
    assert.match(answer.sdp, /^a=rtpmap:96 opus\/48000\/2\r$/m);
    assert.match(answer.sdp, /^a=fmtp:96 useinbandfec=1\r$/m);
    assert.equal(answer.media.codec, 'opus');
    assert.equal(answer.media.payloadType, 96);
    assert.equal(answer.media.clockRate, 48000);
    assert.deepEqual(answer.media.opus, { maxAverageBitrate: 28000, inbandFec: true, dtx: false });
    assert.deepEqual(
      answer.media.codecs.map((entry) => [entry.codec, entry.payloadType]),
      [
        ['opus', 96],
        ['g722', 9],
        ['ulaw', 0],
      ],
    );
  });

  test('incoming_call_offer_pref local: allow= order wins; keep first: one codec', () => {
    const local = answerOffer(SOFTPHONE_OFFER, { ...LOCAL, codecs: ['g722', 'opus', 'ulaw'], prefer: 'local' });
    assert.ok(local.ok);
    assert.equal(local.media.codec, 'g722');
    assert.equal(local.media.clockRate, 8000, 'RFC 3551: G.722 keeps an 8000 clock');
    const first = answerOffer(SOFTPHONE_OFFER, { ...LOCAL, codecs: ['ulaw', 'g722'], prefer: 'local', keep: 'first' });
    assert.ok(first.ok);
    assert.match(first.sdp, /^m=audio 10000 RTP\/AVP 0 101\r$/m);
  });

  test('static payload type 9 without an rtpmap is G.722; Opus must be opus/48000(/2)', () => {
    const offer = (formats: string, ...rtpmaps: string[]) =>
      sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', `m=audio 40000 RTP/AVP ${formats}`, ...rtpmaps);
    const g722 = answerOffer(offer('9'), LOCAL);
    assert.ok(g722.ok);
    assert.equal(g722.media.codec, 'g722');
    assert.equal(answerOffer(offer('97', 'a=rtpmap:97 opus/16000/1'), LOCAL).ok, false, 'not RFC 7587 Opus');
    assert.equal(answerOffer(offer('97', 'a=rtpmap:97 G722/16000'), LOCAL).ok, false, 'G.722 advertised at its audio rate is not the RTP format');
    const bareOpus = answerOffer(offer('98', 'a=rtpmap:98 OPUS/48000'), LOCAL);
    assert.ok(bareOpus.ok);
    assert.equal(bareOpus.media.codec, 'opus');
    assert.deepEqual(bareOpus.media.opus, {});
  });

  test('the answer to our offer names the codec and Opus fmtp the far end chose', () => {
    const answer = sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', 'm=audio 40000 RTP/AVP 107', 'a=rtpmap:107 opus/48000/2', 'a=fmtp:107 maxplaybackrate=16000;cbr=1');
    const accepted = acceptAnswer(answer, LOCAL);
    assert.ok(accepted.ok);
    assert.equal(accepted.media.codec, 'opus');
    assert.deepEqual(accepted.media.opus, { maxPlaybackRate: 16000, cbr: true });
  });

  test('outgoing_call_offer_pref: the calling channel g722 first, then the rest of allow=', () => {
    assert.deepEqual(offerCodecs(['ulaw', 'opus', 'g722'], ['g722'], { prefer: 'remote', operation: 'union', keep: 'all' }), ['g722', 'ulaw', 'opus']);
    assert.deepEqual(offerCodecs(['ulaw', 'opus', 'g722'], ['opus', 'g722'], { prefer: 'local', operation: 'intersect', keep: 'all' }), ['opus', 'g722']);
  });

  test('an offer with telephone-event/48000 and /8000: the one on the chosen codec\'s clock is taken (RFC 4733 §2.1)', () => {
    const offer = sdp(
      'v=0', 'o=- 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0',
      'm=audio 40000 RTP/AVP 107 9 0 101 113',
      'a=rtpmap:107 opus/48000/2', 'a=rtpmap:9 G722/8000', 'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/48000', 'a=fmtp:101 0-16', 'a=rtpmap:113 telephone-event/8000', 'a=fmtp:113 0-16',
    );
    const answer = answerOffer(offer, { ...LOCAL, prefer: 'remote' });
    assert.ok(answer.ok);
    assert.equal(answer.media.codec, 'opus');
    assert.equal(answer.media.telephoneEventPt, 101);
    assert.equal(answer.media.telephoneEventRate, 48000);
    assert.match(answer.sdp, /^m=audio 10000 RTP\/AVP 107 9 0 101\r$/m);
    assert.match(answer.sdp, /^a=rtpmap:101 telephone-event\/48000\r$/m);
    const g722 = answerOffer(offer, { ...LOCAL, codecs: ['g722', 'ulaw'], prefer: 'local' });
    assert.ok(g722.ok);
    assert.equal(g722.media.telephoneEventPt, 113, 'G.722 counts 8000: the 8 kHz events');
    assert.equal(g722.media.telephoneEventRate, undefined, 'absent: 8000');
    const answerOpus = sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', 'm=audio 40000 RTP/AVP 107 100', 'a=rtpmap:107 opus/48000/2', 'a=rtpmap:100 telephone-event/48000');
    const accepted = acceptAnswer(answerOpus, LOCAL);
    assert.ok(accepted.ok);
    assert.deepEqual([accepted.media.telephoneEventPt, accepted.media.telephoneEventRate], [100, 48000]);
    const narrowOffer = acceptAnswer(answerOpus.replace(/107 opus\/48000\/2/, '0 PCMU/8000').replace('RTP/AVP 107 100', 'RTP/AVP 0 100'), { ...LOCAL, codecs: ['ulaw'] });
    assert.ok(narrowOffer.ok);
    assert.equal(narrowOffer.media.telephoneEventPt, undefined, 'a 48 kHz event we did not offer is not taken');
  });

  test('a hostile Opus fmtp is bounded and ignored where it makes no sense', () => {
    assert.deepEqual(readOpusFmtp('maxaveragebitrate=99999999;maxplaybackrate=5;useinbandfec=yes;usedtx=1;' + 'x=1;'.repeat(1000)), { dtx: true });
    assert.deepEqual(readOpusFmtp(undefined), {});
    assert.deepEqual(readOpusFmtp(' MaxPlaybackRate = 24000 ; stereo=1'), { maxPlaybackRate: 24000 });
  });
});
