// The targets of a redirected INVITE (redirect-targets.ts), as pjsip's target set orders them, with
// the bounds a hostile 3xx meets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SipResponse } from '../../../src/sip/message.ts';
import { parseUri, type SipUri } from '../../../src/sip/uri.ts';
import { forwardOf, InviteRedirects, MAX_REDIRECT_CONTACTS, MAX_REDIRECT_HOPS, RedirectTargets } from '../../../src/channels/pjsip/redirect-targets.ts';

const moved = (...contacts: string[]): SipResponse => new SipResponse(302, 'Moved Temporarily', contacts.map((value) => ['Contact', value] as [string, string]));
const first = parseUri('sip:bob@192.0.2.1:5060')!;
const userOf = (uri: SipUri | undefined): string | undefined => uri?.user;

test('the best q first, equal q in the order given, a Contact without q as 1.0', () => {
  const targets = new RedirectTargets(first);
  targets.add(moved('<sip:a@192.0.2.2>;q=0.2, <sip:b@192.0.2.3>;q=0.9', '<sip:c@192.0.2.4>', '<sip:d@192.0.2.5>;q=0.9'));
  assert.deepEqual([targets.next(), targets.next(), targets.next(), targets.next(), targets.next()].map(userOf), ['c', 'b', 'd', 'a', undefined]);
});

test('each URI once: the first target, and a Contact already in the set, are not added again (a loop ends)', () => {
  const targets = new RedirectTargets(first);
  targets.add(moved('<sip:bob@192.0.2.1:5060>', '<sip:x@192.0.2.9>'));
  assert.equal(userOf(targets.follow()), 'x');
  targets.add(moved('<sip:x@192.0.2.9>', '<sip:bob@192.0.2.1:5060>'));
  assert.equal(targets.follow(), undefined);
});

test('other schemes, a wildcard and unparseable Contacts are skipped; at most 20 Contacts of a response are read', () => {
  const targets = new RedirectTargets(first);
  targets.add(moved('<tel:+15551234>', '*', '<sip:@@@>', 'garbage <<<', '<sip:ok@192.0.2.7>'));
  assert.equal(userOf(targets.next()), 'ok');
  assert.equal(targets.next(), undefined);
  const many = new RedirectTargets(first);
  many.add(moved(...Array.from({ length: 500 }, (_, n) => `<sip:u${n}@192.0.2.8>`)));
  let count = 0;
  while (many.next()) count++;
  assert.equal(count, MAX_REDIRECT_CONTACTS);
});

test('at most 5 redirects are followed, however many new targets come', () => {
  const targets = new RedirectTargets(first);
  for (let hop = 0; hop < 10; hop++) targets.add(moved(`<sip:hop${hop}@192.0.2.10>`));
  const followed = [];
  for (let target = targets.follow(); target; target = targets.follow()) followed.push(target.user);
  assert.equal(followed.length, MAX_REDIRECT_HOPS);
  assert.equal(targets.hops, MAX_REDIRECT_HOPS);
});

test("the call forward a redirect leaves: the user part (79 characters at most, as Asterisk copies it), or PJSIP/<endpoint>/<URI> without the URI's headers", () => {
  const uri = parseUri('sip:200@192.0.2.1:5062;transport=tcp?Subject=x') as SipUri;
  assert.equal(forwardOf(uri, 'user', 'bob'), '200');
  assert.equal(forwardOf(uri, 'uri_core', 'bob'), 'PJSIP/bob/sip:200@192.0.2.1:5062;transport=tcp');
  assert.equal(forwardOf(parseUri('sip:192.0.2.1') as SipUri, 'user', 'bob'), '');
  assert.equal(forwardOf(parseUri(`sip:${'9'.repeat(300)}@192.0.2.1`) as SipUri, 'user', 'bob').length, 79);
});

test('InviteRedirects: user and uri_core leave a forward; uri_pjsip resends to the best target, then the next after a refusal, skipping one it cannot reach', () => {
  assert.equal(new InviteRedirects(first, 'user', 'bob').redirected(moved('<sip:300@192.0.2.2>;q=0.5', '<sip:200@192.0.2.3>'), () => true), '200');
  assert.equal(new InviteRedirects(first, 'uri_core', 'bob').redirected(moved('<sip:200@192.0.2.3>'), () => true), 'PJSIP/bob/sip:200@192.0.2.3');
  assert.equal(new InviteRedirects(first, 'user', 'bob').redirected(moved('<tel:200>'), () => true), '', 'no SIP target: no forward');
  const sent: Array<string | undefined> = [];
  const resend = (to: SipUri): boolean => {
    sent.push(to.user);
    return to.user !== 'unreachable';
  };
  const redirects = new InviteRedirects(first, 'uri_pjsip', 'bob');
  assert.equal(redirects.redirected(moved('<sip:b@192.0.2.3>;q=0.5, <sip:unreachable@192.0.2.9>;q=0.9, <sip:a@192.0.2.2>;q=0.7'), resend), true);
  assert.deepEqual(sent, ['unreachable', 'a']);
  assert.equal(redirects.retry(resend), true, 'a refused: b');
  assert.equal(redirects.retry(resend), false, 'none left');
  assert.equal(new InviteRedirects(first, 'user', 'bob').retry(resend), false, 'only uri_pjsip follows');
});
