// The external addresses put in per destination (src/sip/outbound-nat.ts, Asterisk's res_pjsip_nat
// rules): which headers and SDP lines change, towards which destinations, and the exceptions
// (responses to REGISTER, a 302 to INVITE, a media address that is already public).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SipRequest, SipResponse } from '../../src/sip/message.ts';
import { applyOutboundNat, sdpAtExternal, type OutboundNat } from '../../src/sip/outbound-nat.ts';

const nat: OutboundNat = {
  signalingHost: '203.0.113.5',
  signalingPort: 5070,
  mediaHost: '203.0.113.6',
  isLocal: (address) => address.startsWith('192.168.'),
};

const SDP = ['v=0', 'o=- 1 1 IN IP4 192.168.1.10', 's=-', 'c=IN IP4 192.168.1.10', 't=0 0', 'm=audio 4000 RTP/AVP 0', 'c=IN IP4 192.168.1.10', 'a=sendrecv', ''].join('\r\n');

function invite(): SipRequest {
  return new SipRequest(
    'INVITE',
    'sip:bob@198.51.100.1',
    [
      ['Via', 'SIP/2.0/UDP 192.168.1.10:5060;branch=z9hG4bK1;rport'],
      ['Via', 'SIP/2.0/UDP 10.9.9.9:5060;branch=z9hG4bK0'],
      ['Contact', '"Me" <sip:me@192.168.1.10:5060;transport=udp>;expires=60'],
      ['CSeq', '1 INVITE'],
      ['Content-Type', 'application/sdp'],
    ],
    SDP,
  );
}

test('towards a destination outside local_net: top Via, Contact and SDP at the external addresses; the message itself unchanged', () => {
  const request = invite();
  const before = request.toString();
  const out = applyOutboundNat(request, '198.51.100.1', nat);
  assert.equal(request.toString(), before);
  assert.equal(out.getAll('via')[0], 'SIP/2.0/UDP 203.0.113.5:5070;branch=z9hG4bK1;rport');
  assert.equal(out.getAll('via')[1], 'SIP/2.0/UDP 10.9.9.9:5060;branch=z9hG4bK0');
  assert.equal(out.get('contact'), '"Me" <sip:me@203.0.113.5:5070;transport=udp>;expires=60');
  const body = out.body.toString();
  assert.match(body, /^o=- 1 1 IN IP4 203\.0\.113\.6$/m);
  assert.equal(body.match(/^c=IN IP4 203\.0\.113\.6$/gm)?.length, 2);
  assert.ok((out as SipRequest).startLine().startsWith('INVITE sip:bob@198.51.100.1 '));
});

test('towards a destination inside local_net: the very message, untouched', () => {
  const request = invite();
  assert.equal(applyOutboundNat(request, '192.168.1.20', nat), request);
});

test('a host name destination is never local; without local_net every destination is outside', () => {
  assert.notEqual(applyOutboundNat(invite(), 'sip.example.com', nat), undefined);
  assert.equal(applyOutboundNat(invite(), 'sip.example.com', nat).get('contact'), '"Me" <sip:me@203.0.113.5:5070;transport=udp>;expires=60');
  const everywhere = applyOutboundNat(invite(), '192.168.1.20', { signalingHost: '203.0.113.5' });
  assert.equal(everywhere.get('contact'), '"Me" <sip:me@203.0.113.5:5060;transport=udp>;expires=60');
  assert.equal(everywhere.getAll('via')[0], 'SIP/2.0/UDP 203.0.113.5:5060;branch=z9hG4bK1;rport');
});

test('responses: the Contact changes, the Via (the peer\'s) does not; not the Contacts of a REGISTER response or of a 302 to INVITE', () => {
  const ok = new SipResponse(200, 'OK', [['Via', 'SIP/2.0/UDP 198.51.100.1:5060;branch=z9hG4bKx'], ['CSeq', '1 INVITE'], ['Contact', '<sip:me@192.168.1.10:5060>']]);
  const out = applyOutboundNat(ok, '198.51.100.1', nat);
  assert.equal(out.get('contact'), '<sip:me@203.0.113.5:5070>');
  assert.equal(out.get('via'), 'SIP/2.0/UDP 198.51.100.1:5060;branch=z9hG4bKx');
  const registered = new SipResponse(200, 'OK', [['CSeq', '3 REGISTER'], ['Contact', '<sip:phone@192.168.1.30:5060>;expires=60']]);
  assert.equal(applyOutboundNat(registered, '198.51.100.1', nat), registered);
  const moved = new SipResponse(302, 'Moved Temporarily', [['CSeq', '1 INVITE'], ['Contact', '<sip:elsewhere@192.168.1.40>']]);
  assert.equal(applyOutboundNat(moved, '198.51.100.1', nat), moved);
});

test('SDP: a connection address already outside local_net (a public media_address) is left alone; IPv6 external address', () => {
  assert.equal(sdpAtExternal('v=0\r\nc=IN IP4 198.51.100.9\r\n', '203.0.113.6', (address) => address.startsWith('192.168.')), undefined);
  assert.equal(sdpAtExternal('v=0\r\no=- 1 1 IN IP4 10.0.0.1\r\nc=IN IP4 10.0.0.1\r\n', '2001:db8::6', () => true), 'v=0\r\no=- 1 1 IN IP6 2001:db8::6\r\nc=IN IP6 2001:db8::6\r\n');
});
