// Diversion / History-Info read into a channel's redirecting party and written from it
// (diversion.ts), as res_pjsip_diversion maps them, with the bounds a hostile peer meets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SipRequest, SipResponse } from '../../../src/sip/message.ts';
import { parseUri } from '../../../src/sip/uri.ts';
import { NOT_REDIRECTED, parseRedirectingReason, redirectingReasonName, type Redirecting } from '../../../src/core/channels/redirecting.ts';
import { MAX_HISTORY_ENTRIES, redirectingHeaders, redirectingOfRequest, redirectingOfResponse } from '../../../src/channels/pjsip/diversion.ts';

const invite = (headers: Array<[string, string]>): SipRequest =>
  new SipRequest('INVITE', 'sip:200@192.0.2.1', [['From', '<sip:+15550001@provider.example>;tag=a'], ['To', '"Sales" <sip:200@192.0.2.1>'], ...headers]);
const both = { sendDiversion: true, sendHistoryInfo: true };

describe('incoming Diversion and History-Info', () => {
  test('Diversion: from its URI user (cut at ;) and display name, reason parsed, to from To, count 1', () => {
    const got = redirectingOfRequest(invite([['Diversion', '"Support Desk" <sip:+15551234;npdi@provider.example;user=phone>;reason=user-busy;counter=3, <sip:999@x>']]), NOT_REDIRECTED);
    assert.deepEqual(got, {
      orig: { name: '', number: '' },
      from: { name: 'Support Desk', number: '+15551234' },
      to: { name: 'Sales', number: '200' },
      count: 1,
      reason: { code: 1, text: '' },
      origReason: { code: 0, text: '' },
    });
    assert.equal(redirectingReasonName(got!.reason), 'cfb');
  });

  test('a quoted known reason is its code; an unknown one is kept as written under code unknown', () => {
    assert.equal(redirectingReasonName(redirectingOfRequest(invite([['Diversion', '<sip:1@h>;reason="unconditional"']]), NOT_REDIRECTED)!.reason), 'cfu');
    assert.equal(redirectingReasonName(redirectingOfRequest(invite([['Diversion', '<sip:1@h>;reason="holiday mode"']]), NOT_REDIRECTED)!.reason), '"holiday mode"');
    assert.equal(redirectingReasonName(redirectingOfRequest(invite([['Diversion', '<sip:1@h>']]), NOT_REDIRECTED)!.reason), 'unknown');
  });

  test('History-Info: index 1 is the party redirected from, the last other entry the party redirected to, its cause the reason', () => {
    const got = redirectingOfRequest(invite([
      ['History-Info', '<sip:100@pbx.example>;index=1, <sip:150@pbx.example;cause=480>;index=1.1'],
      ['History-Info', '"Voicemail" <sip:200@pbx.example;cause=486>;index=1.1.1'],
    ]), NOT_REDIRECTED)!;
    assert.deepEqual(got.from, { name: '', number: '100' });
    assert.deepEqual(got.to, { name: 'Voicemail', number: '200' });
    assert.equal(redirectingReasonName(got.reason), 'cfb');
    assert.equal(got.count, 1);
  });

  test('Diversion wins over History-Info; neither leaves the channel as it was', () => {
    const got = redirectingOfRequest(invite([['History-Info', '<sip:7@h>;index=1.1'], ['Diversion', '<sip:8@h>']]), NOT_REDIRECTED)!;
    assert.equal(got.from.number, '8');
    assert.equal(redirectingOfRequest(invite([]), NOT_REDIRECTED), undefined);
  });

  test('hostile values: unparseable headers are ignored, control characters dropped, parts bounded, at most 32 History-Info entries read', () => {
    assert.equal(redirectingOfRequest(invite([['Diversion', '<<<garbage']]), NOT_REDIRECTED), undefined);
    const long = redirectingOfRequest(invite([['Diversion', `"${'N'.repeat(5000)}" <sip:${'9'.repeat(3000)}@h>;reason=${'x'.repeat(3000)}`]]), NOT_REDIRECTED)!;
    assert.ok(long.from.name.length <= 80 && long.from.number.length <= 80 && long.reason.text.length <= 80);
    const entries = Array.from({ length: 500 }, (_, n) => `<sip:${n}@h>;index=1.${n}`).join(', ');
    const many = redirectingOfRequest(invite([['History-Info', entries]]), NOT_REDIRECTED)!;
    assert.equal(many.to.number, String(MAX_HISTORY_ENTRIES - 1));
  });
});

describe('302 and 181 to our INVITE', () => {
  const response = (status: number, headers: Array<[string, string]>): SipResponse =>
    new SipResponse(status, 'x', [['From', '<sip:alice@192.0.2.5>;tag=f'], ['To', '"Bob" <sip:bob@192.0.2.9>;tag=t'], ...headers]);

  test('302 without Diversion: from To (our endpoint has no caller id number), to the Contact', () => {
    const got = redirectingOfResponse(response(302, [['Contact', '<sip:300@192.0.2.9>']]), NOT_REDIRECTED, undefined)!;
    assert.deepEqual([got.from, got.to, got.count], [{ name: 'Bob', number: 'bob' }, { name: '', number: '300' }, 1]);
  });

  test('302 with our own caller id: the redirect is from us; with Diversion: from the Diversion, with its reason', () => {
    const self = redirectingOfResponse(response(302, [['Contact', '<sip:300@h>']]), NOT_REDIRECTED, { name: 'Trunk', number: '5000' })!;
    assert.deepEqual(self.from, { name: 'Trunk', number: '5000' });
    const diverted = redirectingOfResponse(response(302, [['Contact', '<sip:300@h>'], ['Diversion', '<sip:42@h>;reason=no-answer']]), NOT_REDIRECTED, undefined)!;
    assert.deepEqual([diverted.from.number, redirectingReasonName(diverted.reason)], ['42', 'cfnr']);
  });

  test('181: from To, to the Diversion; other statuses change nothing', () => {
    const got = redirectingOfResponse(response(181, [['Diversion', '<sip:77@h>']]), NOT_REDIRECTED, undefined)!;
    assert.deepEqual([got.from.number, got.to.number], ['bob', '77']);
    assert.equal(redirectingOfResponse(response(301, [['Contact', '<sip:1@h>']]), NOT_REDIRECTED, undefined), undefined);
  });
});

describe('outgoing Diversion and History-Info', () => {
  const redirected: Redirecting = { ...NOT_REDIRECTED, from: { name: 'Support', number: '100' }, to: { name: '', number: '300' }, count: 1, reason: parseRedirectingReason('cfu') };
  const target = parseUri('sip:bob@192.0.2.9:5080')!;

  test('Diversion on our From host with the reason in its SIP spelling; History-Info on the To URI, index 1 and 1.1 with the cause', () => {
    assert.deepEqual(redirectingHeaders(both, redirected, 'pbx.example', target), [
      ['Diversion', '"Support" <sip:100@pbx.example>;reason=unconditional'],
      ['History-Info', '"Support" <sip:100@192.0.2.9:5080>;index=1'],
      ['History-Info', '<sip:300@192.0.2.9:5080;cause=302>;index=1.1'],
    ]);
  });

  test('no Diversion for a channel never redirected (count 0) or with send_diversion=no; History-Info then names the target', () => {
    assert.deepEqual(redirectingHeaders({ sendDiversion: true, sendHistoryInfo: false }, { ...redirected, count: 0 }, 'h', target), []);
    assert.deepEqual(redirectingHeaders({ sendDiversion: false, sendHistoryInfo: false }, redirected, 'h', target), []);
    assert.deepEqual(redirectingHeaders(both, NOT_REDIRECTED, 'h', target), [['History-Info', '<sip:bob@192.0.2.9:5080>;index=1']]);
  });

  test('a reason that is no token is quoted; the dialplan cannot break the header', () => {
    const odd = { ...redirected, from: { name: 'Eve "x"', number: '1' }, reason: parseRedirectingReason('gone fishing') };
    const [[, value]] = redirectingHeaders({ sendDiversion: true, sendHistoryInfo: false }, odd, 'h', target) as [[string, string]];
    assert.match(value, /;reason="gone fishing"$/);
    assert.doesNotMatch(value, /[\r\n]/);
  });
});
