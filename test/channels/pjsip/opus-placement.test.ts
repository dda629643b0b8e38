// Where a call that may agree on Opus runs (media.worker_opus off): only a call whose endpoint allows
// Opus and whose offer (when it is already here) lists it counts; anything else goes to a worker.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mayAgreeOnOpus } from '../../../src/channels/pjsip/opus-placement.ts';

function offer(rtpmaps: readonly string[], formats: string): Buffer {
  return Buffer.from(['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio 4000 RTP/AVP ${formats}`, ...rtpmaps.map((line) => `a=rtpmap:${line}`), ''].join('\r\n'));
}

describe('mayAgreeOnOpus', () => {
  test('an endpoint that does not allow Opus never agrees on it', () => {
    assert.equal(mayAgreeOnOpus({ codecs: ['ulaw', 'g722'], inboundOffer: undefined }), false);
    assert.equal(mayAgreeOnOpus({ codecs: ['ulaw'], inboundOffer: offer(['107 opus/48000/2'], '107') }), false);
  });

  test('an outbound call, or a late offer, may agree on Opus when the endpoint allows it', () => {
    assert.equal(mayAgreeOnOpus({ codecs: ['opus', 'ulaw'], inboundOffer: undefined }), true);
    assert.equal(mayAgreeOnOpus({ codecs: ['opus', 'ulaw'], inboundOffer: Buffer.alloc(0) }), true);
  });

  test('an inbound offer decides: Opus listed (any payload type, any case) or not', () => {
    assert.equal(mayAgreeOnOpus({ codecs: ['opus', 'ulaw'], inboundOffer: offer(['0 PCMU/8000', '111 OPUS/48000/2'], '0 111') }), true);
    assert.equal(mayAgreeOnOpus({ codecs: ['opus', 'ulaw'], inboundOffer: offer(['0 PCMU/8000', '101 telephone-event/8000'], '0 101') }), false);
    assert.equal(mayAgreeOnOpus({ codecs: ['opus', 'ulaw'], inboundOffer: offer([], '0 8') }), false);
  });

  test('an unreadable offer is left to the answer (which refuses it): treated as possibly Opus', () => {
    assert.equal(mayAgreeOnOpus({ codecs: ['opus'], inboundOffer: Buffer.from('not sdp at all') }), true);
  });
});
