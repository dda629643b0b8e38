// chan_pjsip's CHANNEL items without the `pjsip,` prefix (endpoint, aor, contact, rtp,…, rtcp,…) as
// sipMediaInfo answers them from a call's media facts, and PJSIP_MEDIA_OFFER's codec lists.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sipMediaInfo, type CallMediaFacts } from '../../../src/channels/pjsip/channel-info.ts';
import { codecList } from '../../../src/channels/pjsip/session-functions.ts';
import type { RtpStatistics } from '../../../src/media/rtp/statistics.ts';
import type { NegotiatedMedia } from '../../../src/sip/sdp/index.ts';

const stats = { txcount: 50, rxcount: 48, rxjitter: 0.0125, local_ssrc: 4_000_000_000, rtt: 0 } as unknown as RtpStatistics;

function facts(overrides: Partial<CallMediaFacts> = {}): CallMediaFacts {
  return {
    endpointId: 'alice',
    contact: { aor: 'alice', id: 'alice;@abc' },
    mediaAddress: '127.0.0.1',
    stream: { localPort: 10000, statistics: () => stats },
    negotiated: { remoteAddress: '127.0.0.5', remotePort: 6000 } as unknown as NegotiatedMedia,
    heldByFarEnd: false,
    ...overrides,
  };
}

describe('CHANNEL(rtp|rtcp|endpoint|aor|contact) of a PJSIP channel', () => {
  test('the session\'s objects', () => {
    assert.equal(sipMediaInfo('endpoint', facts()), 'alice');
    assert.equal(sipMediaInfo('aor', facts()), 'alice');
    assert.equal(sipMediaInfo('contact', facts()), 'alice;@abc');
    assert.equal(sipMediaInfo('aor', facts({ contact: undefined })), '');
  });
  test('rtp: src, dest, direct, secure, hold; video and unknown types fail', () => {
    assert.equal(sipMediaInfo('rtp,src', facts()), '127.0.0.1:10000');
    assert.equal(sipMediaInfo('rtp,dest,audio', facts()), '127.0.0.5:6000');
    assert.equal(sipMediaInfo('rtp,dest', facts({ negotiated: { remoteAddress: '::1', remotePort: 7 } as unknown as NegotiatedMedia })), '[::1]:7');
    assert.equal(sipMediaInfo('rtp,direct', facts()), '');
    assert.equal(sipMediaInfo('rtp,direct', facts({ directTarget: { address: '127.0.0.9', port: 4000 } })), '127.0.0.9:4000');
    assert.equal(sipMediaInfo('rtp,secure', facts()), '0');
    assert.equal(sipMediaInfo('rtp,hold', facts({ heldByFarEnd: true })), '1');
    assert.equal(sipMediaInfo('rtp,src,video', facts()), undefined);
    assert.equal(sipMediaInfo('rtp,bogus', facts()), undefined);
    assert.equal(sipMediaInfo('rtp', facts()), undefined);
    assert.equal(sipMediaInfo('rtp,src', facts({ stream: undefined })), undefined);
  });
  test('rtcp: one figure, or a whole quality string', () => {
    assert.equal(sipMediaInfo('rtcp,txcount', facts()), '50');
    assert.equal(sipMediaInfo('rtcp,local_ssrc', facts()), '4000000000');
    assert.equal(sipMediaInfo('rtcp,rxjitter', facts()), '0.012500');
    assert.match(sipMediaInfo('rtcp,all', facts()) ?? '', /^ssrc=4000000000;themssrc=.*;rxcount=48;.*txcount=50;/);
    assert.equal(sipMediaInfo('rtcp,nosuchfigure', facts()), undefined);
    assert.equal(sipMediaInfo('rtcp,txcount', facts({ stream: { localPort: 1, statistics: () => undefined } })), undefined);
  });
});

describe('PJSIP_MEDIA_OFFER codec lists', () => {
  test('as allow applies them to an empty set, keeping what Patchbay carries', () => {
    assert.deepEqual(codecList('alaw,ulaw'), ['alaw', 'ulaw']);
    assert.deepEqual(codecList('all,!g722'), ['ulaw', 'alaw', 'opus']);
    assert.deepEqual(codecList('G729,gsm,ULAW'), ['ulaw']);
    assert.deepEqual(codecList('nothing'), []);
    assert.deepEqual(codecList(`${'ulaw,'.repeat(10_000)}alaw`), ['ulaw']);
  });
});
