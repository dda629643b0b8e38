// Direct media's decision (direct-media.ts, bridge_native_rtp's compatibility checks as far as SIP
// goes) and its offers: which pairs of legs may send their media to each other, what an offer
// names, and when it goes (the dialog confirmed, direct_media_glare_mitigation, a refusal).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CallDirectMedia, directMediaRefusal, type DirectMediaCall, type DirectMediaLeg, type DirectTarget } from '../../../src/channels/pjsip/direct-media.ts';
import type { NegotiatedMedia } from '../../../src/sip/sdp/index.ts';

function media(overrides: Partial<NegotiatedMedia> = {}): NegotiatedMedia {
  return { remoteAddress: '127.0.0.5', remotePort: 6000, remoteRtcpPort: 6001, codec: 'ulaw', payloadType: 0, clockRate: 8000, telephoneEventPt: 101, direction: 'sendrecv', ptime: 20, codecs: [], mediaIndex: 0, rtcpMux: false, ...overrides } as NegotiatedMedia;
}

function leg(overrides: Partial<DirectMediaLeg> = {}): DirectMediaLeg {
  return { options: { directMedia: true, forceRport: true }, negotiated: media(), dtmfMode: 'rfc4733', signallingAddress: '127.0.0.5', held: false, ...overrides };
}

describe('direct media: which two legs may send to each other', () => {
  test('two direct_media legs with the same codec and RFC 4733 digits may', () => {
    assert.equal(directMediaRefusal(leg(), leg({ negotiated: media({ remoteAddress: '127.0.0.6' }), signallingAddress: '127.0.0.6' })), undefined);
  });

  test('each condition refuses alone', () => {
    const ok = leg();
    assert.equal(directMediaRefusal(leg({ options: { directMedia: false } }), ok), 'direct_media=no');
    assert.equal(directMediaRefusal(ok, leg({ negotiated: undefined })), 'no media agreed');
    assert.equal(directMediaRefusal(ok, leg({ negotiated: media({ remoteAddress: undefined }) })), 'no media agreed');
    assert.equal(directMediaRefusal(ok, leg({ negotiated: media({ codec: 'alaw', payloadType: 8 }) })), 'codecs differ');
    assert.equal(directMediaRefusal(ok, leg({ negotiated: media({ srtp: {} as NegotiatedMedia['srtp'] }) })), 'secure media');
    assert.equal(directMediaRefusal(ok, leg({ negotiated: media({ security: {} as NegotiatedMedia['security'] }) })), 'secure media');
    assert.equal(directMediaRefusal(ok, leg({ dtmfMode: 'inband' })), 'inband DTMF');
    assert.equal(directMediaRefusal(ok, leg({ dtmfMode: 'auto', negotiated: media({ telephoneEventPt: undefined }) })), 'inband DTMF');
    assert.equal(directMediaRefusal(ok, leg({ dtmfMode: 'info', negotiated: media({ telephoneEventPt: undefined }) })), 'DTMF modes differ');
    assert.equal(directMediaRefusal(ok, leg({ held: true })), 'held');
  });

  test('disable_direct_media_on_nat refuses a far end whose signalling comes from another address than its SDP names', () => {
    const natted = leg({ options: { directMedia: true, forceRport: true, disableDirectMediaOnNat: true }, signallingAddress: '198.51.100.7' });
    assert.equal(directMediaRefusal(leg(), natted), 'NAT');
    // Without the option, or without force_rport and rtp_symmetric, the address is not looked at.
    assert.equal(directMediaRefusal(leg(), leg({ signallingAddress: '198.51.100.7' })), undefined);
    assert.equal(directMediaRefusal(leg(), leg({ options: { directMedia: true, disableDirectMediaOnNat: true, forceRport: false }, signallingAddress: '198.51.100.7' })), undefined);
    assert.equal(directMediaRefusal(leg(), { ...natted, signallingAddress: '127.0.0.5' }), undefined);
  });
});

/** A call whose offers are recorded; `confirmed` and the offer's fate are the test's. */
function fakeCall(overrides: Partial<DirectMediaCall> = {}): { call: DirectMediaCall; offers: Array<{ method: string; target: DirectTarget | undefined; refused: () => void }>; state: { confirmed: boolean; target: DirectTarget | undefined } } {
  const offers: Array<{ method: string; target: DirectTarget | undefined; refused: () => void }> = [];
  const state = { confirmed: true, target: undefined as DirectTarget | undefined };
  const call: DirectMediaCall = {
    ...leg(),
    outbound: false,
    ended: false,
    get confirmed() { return state.confirmed; },
    setTarget: (target) => void (state.target = target),
    offer: (method, refused) => (offers.push({ method, target: state.target, refused }), true),
    ...overrides,
  };
  return { call, offers, state };
}

describe('direct media: the offers', () => {
  const peer = leg({ negotiated: media({ remoteAddress: '127.0.0.6', remotePort: 7000 }), signallingAddress: '127.0.0.6' });

  test('the far end is offered the peer\'s address and codec once, and our own again when the core takes it back', () => {
    const { call, offers } = fakeCall();
    const direct = new CallDirectMedia(call);
    assert.equal(direct.point(peer), true);
    assert.equal(direct.point(peer), true, 'asked again: nothing new is sent');
    assert.deepEqual(offers.map(({ method, target }) => [method, target]), [['INVITE', { address: '127.0.0.6', port: 7000, codec: 'ulaw' }]]);
    assert.equal(direct.point(undefined), true);
    assert.equal(direct.point(undefined), true);
    assert.deepEqual(offers.map(({ target }) => target), [{ address: '127.0.0.6', port: 7000, codec: 'ulaw' }, undefined]);
    assert.equal(direct.direct, false);
  });

  test('a peer of another technology, or one refusing, is no direct media; direct_media_method=update sends an UPDATE', () => {
    const { call, offers } = fakeCall({ options: { directMedia: true, directMediaMethod: 'update' } });
    const direct = new CallDirectMedia(call);
    assert.equal(direct.point(null), false);
    assert.equal(direct.point(leg({ held: true })), false);
    assert.equal(offers.length, 0);
    assert.equal(direct.point(peer), true);
    assert.deepEqual(offers.map(({ method }) => method), ['UPDATE']);
  });

  test('an offer waits for the dialog to be confirmed (an inbound call\'s ACK)', () => {
    const { call, offers, state } = fakeCall();
    state.confirmed = false;
    const direct = new CallDirectMedia(call);
    assert.equal(direct.point(peer), true);
    assert.equal(offers.length, 0);
    state.confirmed = true;
    direct.confirmed();
    assert.equal(offers.length, 1);
  });

  test('while the other leg\'s far end sends straight to ours, nothing of ours is written to it', () => {
    const { call } = fakeCall();
    const direct = new CallDirectMedia(call);
    const sending = { ...peer, sendsDirect: false };
    direct.point(sending);
    assert.equal(direct.peerSendsHere, false, 'the other leg was not re-INVITEd (glare mitigation): ours goes on');
    sending.sendsDirect = true;
    assert.equal(direct.peerSendsHere, true);
    direct.point(undefined);
    assert.equal(direct.peerSendsHere, false, 'taken back: ours goes at once');
  });

  test('a refused offer leaves the far end where it was: our SDP names us again', () => {
    const { call, offers, state } = fakeCall();
    const direct = new CallDirectMedia(call);
    direct.point(peer);
    offers[0]?.refused();
    assert.equal(state.target, undefined);
    assert.equal(direct.direct, false);
  });

  test('direct_media_glare_mitigation leaves the first direct offer of calls of its direction to the other leg', () => {
    const outgoing = fakeCall({ outbound: true, options: { directMedia: true, directMediaGlareMitigation: 'outgoing' } });
    const skipped = new CallDirectMedia(outgoing.call);
    assert.equal(skipped.point(peer), true);
    assert.equal(outgoing.offers.length, 0, 'an outgoing call sends no first direct offer');
    const incoming = fakeCall({ outbound: false, options: { directMedia: true, directMediaGlareMitigation: 'outgoing' } });
    new CallDirectMedia(incoming.call).point(peer);
    assert.equal(incoming.offers.length, 1, 'an incoming call does');
  });
});
