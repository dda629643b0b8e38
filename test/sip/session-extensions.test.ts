// The protocol pieces behind 100rel, session timers and codec preferences, without a network:
// option tags read from hostile headers, RFC 4028's UAS/UAC decisions, RFC 3262's reliability
// decision and PRACK ordering, the offer's codec list, and the endpoint options that set them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { optionTags, unsupportedRequirements } from '../../src/sip/extensions.ts';
import { SipRequest, SipResponse } from '../../src/sip/message.ts';
import { ReliableProvisionalReceiver, uasReliability } from '../../src/sip/reliable-provisional.ts';
import { answerOffer } from '../../src/sip/sdp/index.ts';
import { offerCodecs } from '../../src/sip/sdp/codec-preference.ts';
import { readSessionExpires, uacSessionTimer, uasSessionTimer, type SessionTimerSettings } from '../../src/sip/session-timer.ts';
import { parseUri } from '../../src/sip/uri.ts';
import { endpointSessionOptions, incomingPreference, outgoingPreference, parseCodecPrefs } from '../../src/channels/pjsip/config/session-values.ts';
import { buildPjsipConfig } from '../../src/channels/pjsip/config/index.ts';

function invite(headers: Array<[string, string]>): SipRequest {
  const uri = parseUri('sip:100@192.0.2.1');
  assert.ok(uri);
  return new SipRequest('INVITE', uri, [['CSeq', '1 INVITE'], ...headers]);
}

function response(status: number, headers: Array<[string, string]>): SipResponse {
  const message = new SipResponse(status, 'x');
  for (const [name, value] of headers) message.add(name, value);
  return message;
}

const TIMERS: SessionTimerSettings = { mode: 'yes', minSe: 90, sessionExpires: 1800 };

describe('option tags', () => {
  test('Supported (also compact k) and Require, lower-cased, each once, bounded', () => {
    const request = invite([['k', '100rel, Timer'], ['Supported', 'timer'], ['Require', 'x-Foo,, 100rel']]);
    assert.deepEqual(optionTags(request, 'supported'), ['100rel', 'timer']);
    assert.deepEqual(unsupportedRequirements(request, new Set(['100rel', 'timer'])), ['x-foo']);
    const flood = invite([['Require', Array.from({ length: 500 }, (_, i) => `x${i}`).join(',')]]);
    assert.equal(optionTags(flood, 'require').length, 32);
    assert.deepEqual(optionTags(invite([['Require', '<bad>\u0001tag']]), 'require'), ['badtag']);
  });
});

describe('session timers (RFC 4028)', () => {
  test('Session-Expires read safely', () => {
    assert.deepEqual(readSessionExpires(invite([['Session-Expires', '1800;refresher=UAS']])), { interval: 1800, refresher: 'uas' });
    assert.deepEqual(readSessionExpires(invite([['x', '120']])), { interval: 120 });
    assert.equal(readSessionExpires(invite([['Session-Expires', 'soon']])), undefined);
    assert.equal(readSessionExpires(invite([['Session-Expires', '99999999999']])), undefined);
    assert.deepEqual(readSessionExpires(invite([['Session-Expires', '9999999999']])), { interval: 86_400 });
  });

  test('UAS: 422 below Min-SE, 421 when required and unsupported, the caller\'s interval and refresher otherwise', () => {
    assert.deepEqual(uasSessionTimer(invite([['Session-Expires', '60']]), TIMERS), { kind: 'too-small', minSe: 90 });
    assert.deepEqual(uasSessionTimer(invite([]), { ...TIMERS, mode: 'required' }), { kind: 'extension-required' });
    assert.deepEqual(uasSessionTimer(invite([]), TIMERS), { kind: 'none' });
    assert.deepEqual(uasSessionTimer(invite([['Session-Expires', '60']]), { ...TIMERS, mode: 'no' }), { kind: 'none' });
    assert.deepEqual(uasSessionTimer(invite([['Supported', 'timer'], ['Session-Expires', '600;refresher=uas']]), TIMERS), {
      kind: 'timer',
      terms: { interval: 600, refresher: 'uas' },
      requireTimer: true,
    });
    // Lowered to our timers_sess_expires; a caller without timer support cannot refresh.
    assert.deepEqual(uasSessionTimer(invite([['Session-Expires', '7200;refresher=uac']]), TIMERS), {
      kind: 'timer',
      terms: { interval: 1800, refresher: 'uas' },
      requireTimer: false,
    });
    assert.deepEqual(uasSessionTimer(invite([]), { ...TIMERS, mode: 'always' }), { kind: 'timer', terms: { interval: 1800, refresher: 'uas' }, requireTimer: false });
  });

  test('UAC: the 2xx grants the timer; without Session-Expires there is none unless timers=always', () => {
    assert.deepEqual(uacSessionTimer(response(200, [['Session-Expires', '900;refresher=uas']]), TIMERS), { interval: 900, refresher: 'uas' });
    assert.equal(uacSessionTimer(response(200, []), TIMERS), undefined);
    assert.deepEqual(uacSessionTimer(response(200, []), { ...TIMERS, mode: 'always' }), { interval: 1800, refresher: 'uac' });
  });
});

describe('reliable provisionals (RFC 3262)', () => {
  test('the UAS decision follows 100rel', () => {
    const requires = invite([['Require', '100rel']]);
    const supports = invite([['Supported', '100rel']]);
    assert.equal(uasReliability(requires, 'no').kind, 'bad-extension');
    assert.equal(uasReliability(requires, 'yes').kind, 'reliable');
    assert.equal(uasReliability(supports, 'yes').kind, 'unreliable');
    assert.equal(uasReliability(supports, 'peer_supported').kind, 'reliable');
    assert.equal(uasReliability(invite([]), 'required').kind, 'extension-required');
  });

  test('the UAC PRACKs each RSeq once, in order', () => {
    const receiver = new ReliableProvisionalReceiver();
    const provisional = (rseq: string) => response(183, [['Require', '100rel'], ['RSeq', rseq], ['CSeq', '7 INVITE']]);
    assert.equal(receiver.rackFor(response(180, [['CSeq', '7 INVITE']])), undefined, 'not reliable');
    assert.equal(receiver.rackFor(provisional('41')), '41 7 INVITE');
    assert.equal(receiver.rackFor(provisional('41')), undefined, 'a retransmission');
    assert.equal(receiver.rackFor(provisional('43')), undefined, 'out of order');
    assert.equal(receiver.rackFor(provisional('42')), '42 7 INVITE');
    assert.equal(receiver.rackFor(provisional('junk')), undefined);
  });
});

describe('codec preferences', () => {
  const OFFER = 'v=0\r\no=- 1 1 IN IP4 192.0.2.7\r\ns=-\r\nc=IN IP4 192.0.2.7\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8 0 101\r\na=rtpmap:101 telephone-event/8000\r\n';

  test('answers: the offer\'s order or ours, all or the first', () => {
    const local = { address: '192.0.2.1', port: 10000, codecs: ['ulaw', 'alaw'] as const };
    const offerOrder = answerOffer(OFFER, { ...local, prefer: 'remote' });
    assert.ok(offerOrder.ok);
    assert.match(offerOrder.sdp, /m=audio 10000 RTP\/AVP 8 0 101/);
    assert.deepEqual(offerOrder.media.codecs.map((c) => c.payloadType), [8, 0], 'both listed: the far end may send either');
    const first = answerOffer(OFFER, { ...local, prefer: 'local', keep: 'first' });
    assert.ok(first.ok);
    assert.match(first.sdp, /m=audio 10000 RTP\/AVP 0 101/);
  });

  test('offers: merge, intersect and first, the local list when the caller has nothing in common', () => {
    const pref = outgoingPreference;
    assert.deepEqual(offerCodecs(['ulaw', 'alaw'], ['alaw'], pref('remote_merge')), ['alaw', 'ulaw']);
    assert.deepEqual(offerCodecs(['ulaw', 'alaw'], ['alaw'], pref('local_merge')), ['ulaw', 'alaw']);
    assert.deepEqual(offerCodecs(['ulaw', 'alaw'], ['alaw'], pref('remote')), ['alaw']);
    assert.deepEqual(offerCodecs(['ulaw', 'alaw'], ['alaw'], pref('local_first')), ['ulaw']);
    assert.deepEqual(offerCodecs(['ulaw', 'alaw'], [], pref('remote')), ['ulaw', 'alaw']);
    assert.deepEqual(offerCodecs(['ulaw'], ['g722'], pref('remote')), ['ulaw']);
  });

  test('the endpoint options parse as Asterisk writes them', () => {
    assert.deepEqual(incomingPreference('local_first'), { prefer: 'local', operation: 'intersect', keep: 'first' });
    assert.deepEqual(parseCodecPrefs('prefer: configured, operation: intersect, keep: first, transcode: allow', { prefer: 'remote', operation: 'intersect', keep: 'all' }, false), {
      ok: true,
      value: { prefer: 'local', operation: 'intersect', keep: 'first' },
    });
    assert.equal(parseCodecPrefs('operation: union', { prefer: 'remote', operation: 'intersect', keep: 'all' }, false).ok, false, 'an answer cannot add codecs');
    assert.equal(parseCodecPrefs('transcode: prevent', { prefer: 'remote', operation: 'intersect', keep: 'all' }, true).ok, false);
  });

  test('an endpoint: Asterisk 22 defaults, and the options applied', () => {
    const built = buildPjsipConfig([
      { type: 'endpoint', id: 'plain', fields: { allow: 'ulaw' } },
      { type: 'endpoint', id: 'tuned', fields: { allow: 'ulaw', '100rel': 'required', timers: 'forced', timers_min_se: '120', timers_sess_expires: '600', incoming_call_offer_pref: 'local' } },
      { type: 'endpoint', id: 'modern', fields: { allow: 'ulaw', incoming_call_offer_pref: 'remote', codec_prefs_incoming_offer: 'prefer: configured, keep: first' } },
      { type: 'endpoint', id: 'bad', fields: { allow: 'ulaw', timers_min_se: '600', timers_sess_expires: '300' } },
    ]);
    const options = (id: string) => {
      const endpoint = built.value.endpoints.get(id);
      assert.ok(endpoint, id);
      return endpointSessionOptions(endpoint);
    };
    const plain = options('plain');
    assert.equal(plain.reliableProvisionals, 'yes');
    assert.deepEqual(plain.sessionTimers, { mode: 'yes', minSe: 90, sessionExpires: 1800 });
    assert.deepEqual(plain.incomingOfferPref, { prefer: 'remote', operation: 'intersect', keep: 'all' }, "the offer's order by default");
    assert.deepEqual(plain.outgoingOfferPref, { prefer: 'remote', operation: 'union', keep: 'all' });
    const tuned = options('tuned');
    assert.equal(tuned.reliableProvisionals, 'required');
    assert.deepEqual(tuned.sessionTimers, { mode: 'always', minSe: 120, sessionExpires: 600 });
    assert.equal(tuned.incomingOfferPref.prefer, 'local');
    assert.deepEqual(options('modern').incomingOfferPref, { prefer: 'local', operation: 'intersect', keep: 'first' }, 'codec_prefs_incoming_offer wins');
    assert.ok(built.errors.some((line) => /timers_sess_expires/.test(line)), built.errors.join('\n'));
    assert.deepEqual(built.warnings.filter((line) => /100rel|timers|offer_pref|codec_prefs/.test(line)), [], 'none is warned about as not implemented');
  });
});
