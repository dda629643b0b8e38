// The parts of a REFER with Replaces that res_pjsip_refer reads and hands on (refer.ts,
// dialplan-transfer.ts): an unreadable Replaces refuses the REFER (400) rather than making it a
// blind transfer; SIPREPLACESHDR is the Replaces as pjsip prints it, inherited (`__`) so that a
// PJSIP channel the external_replaces dialplan dials sends it; SIPREFERTOHDR is a request URI, so
// without the `?Replaces=` header.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { transfereeVariables } from '../../../src/channels/pjsip/dialplan-transfer.ts';
import { formatReplaces, parseReferTo } from '../../../src/channels/pjsip/refer.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';

function refer(referTo: string, more = ''): SipRequest {
  const text = [
    'REFER sip:500@127.0.0.1 SIP/2.0',
    'Via: SIP/2.0/UDP 127.0.0.1:5099;branch=z9hG4bKr1',
    'From: <sip:alice@127.0.0.1>;tag=a',
    'To: <sip:500@127.0.0.1>;tag=b',
    'Call-ID: c1',
    'CSeq: 2 REFER',
    `Refer-To: ${referTo}`,
    ...(more ? [more] : []),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const parsed = parseMessage(text);
  assert.ok(parsed.ok && 'method' in parsed.message);
  return parsed.message as SipRequest;
}

describe('REFER with Replaces: what res_pjsip_refer reads and hands on', () => {
  test('a Replaces with its tags is read; one without a Call-ID refuses the Refer-To (400), not a blind transfer', () => {
    const read = parseReferTo(refer(`<sip:carol@192.0.2.10?Replaces=${encodeURIComponent('x@y;to-tag=t;from-tag=f')}>`));
    assert.deepEqual(read?.replaces, { callId: 'x@y', toTag: 't', fromTag: 'f' });
    assert.equal(parseReferTo(refer(`<sip:carol@192.0.2.10?Replaces=${encodeURIComponent(';to-tag=t')}>`)), undefined);
    assert.equal(parseReferTo(refer(`<sip:carol@192.0.2.10?Replaces=${'a'.repeat(1100)}>`)), undefined, 'bounded');
  });

  test('SIPREPLACESHDR prints the Call-ID, to-tag, from-tag, then early-only; a tag not given is left out', () => {
    assert.equal(formatReplaces({ callId: 'x@y', toTag: 't', fromTag: 'f', earlyOnly: true }), 'x@y;to-tag=t;from-tag=f;early-only');
    assert.equal(formatReplaces({ callId: 'x@y', fromTag: 'f' }), 'x@y;from-tag=f');
  });

  test('the transferee\'s variables: __SIPREPLACESHDR (inherited) before SIPREFERTOHDR, the URI without its headers', () => {
    const read = parseReferTo(refer(`<sip:carol@192.0.2.10;user=phone?Replaces=${encodeURIComponent('x@y;to-tag=t;from-tag=f')}>`));
    assert.ok(read);
    assert.deepEqual(transfereeVariables('phones', read, '<sip:alice@127.0.0.1>'), [
      ['SIPTRANSFER', 'yes'],
      ['SIPREFERRINGCONTEXT', 'phones'],
      ['__SIPREFERREDBYHDR', '<sip:alice@127.0.0.1>'],
      ['__SIPREPLACESHDR', 'x@y;to-tag=t;from-tag=f'],
      ['SIPREFERTOHDR', 'sip:carol@192.0.2.10;user=phone'],
    ]);
    const blind = parseReferTo(refer('<sip:200@127.0.0.1>'));
    assert.ok(blind);
    assert.equal(transfereeVariables('phones', blind, undefined).some(([name]) => name === '__SIPREPLACESHDR'), false);
  });
});
