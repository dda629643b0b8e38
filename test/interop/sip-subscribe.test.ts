// SUBSCRIBE/NOTIFY (RFC 6665) against SIPp, as Asterisk's res_pjsip_pubsub, res_pjsip_exten_state
// and res_pjsip_mwi serve them:
// - a dialog (BLF) subscription to a hinted extension gets the idle state at once, then a NOTIFY
//   as a call on the hinted device (PJSIP/alice) starts and one as it ends, and a terminated
//   NOTIFY when it unsubscribes;
// - a registered phone ringing (an ARI originate) is an early dialog naming the caller;
// - a presence subscription gets PIDF: closed while alice is unavailable, open on the phone;
// - a message-summary subscription to an AOR with mailboxes= gets Messages-Waiting: no, then
//   yes with the counts after PUT /ari/mailboxes/…, with the AOR's voicemail_extension as Message-Account;
// - the same over TCP;
// - an endpoint with mailboxes= gets unsolicited MWI NOTIFYs at its registered contact: when it
//   registers, and when the mailbox changes;
// - a refresh grants its duration and NOTIFYs; an unrefreshed subscription ends with
//   terminated;reason=timeout; a NOTIFY answered 481 ends it;
// - refusals: 489 (package not served, Accept without its type), 404 (no hint), 423 (below
//   sub_min_expiry), 400 (a new subscription with Expires: 0).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, nextEvent, ofChannel, randomPort, sipp, startSippServer, waitFor, type SippServer } from './sipp-peer.ts';

let peer: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;
let target: () => string;

const DIALPLAN = [
  '[blf-phones]',
  'exten => 100,hint,PJSIP/alice',
  'exten => 100,1,Stasis(blf-app)',
  'exten => 200,1,Stasis(blf-app)',
  'exten => 101,hint,PJSIP/dave',
  '',
].join('\n');

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sip-subscribe', DIALPLAN, {
    endpoint: {
      watcher: { context: 'blf-phones', allow: 'ulaw', aors: 'watcher', sub_min_expiry: 60 },
      alice: { context: 'blf-phones', allow: 'ulaw', aors: 'alice' },
      bob: { context: 'blf-phones', allow: 'ulaw', aors: 'bob' },
      carol: { context: 'blf-phones', allow: 'ulaw', aors: 'carol', mailboxes: 'carol@default', voicemail_extension: '*98' },
      dave: { context: 'blf-phones', allow: 'ulaw', aors: 'dave' },
    },
    aor: {
      watcher: { max_contacts: 1 },
      alice: { max_contacts: 1 },
      bob: { max_contacts: 1, mailboxes: 'bob@default', voicemail_extension: '*97' },
      carol: { max_contacts: 1 },
      dave: { max_contacts: 1 },
    },
  }, 'blf-app');
  ({ work, server, events, target } = peer);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

const subscriptions = (): number => server.core.pjsip.stats().subscriptions;

/** The NOTIFYs SIPp received, in order, as their Subscription-State and body (from its -trace_msg log). */
function notifies(logFile: string): { state: string; body: string }[] {
  // SIPp writes each message after a line of dashes and one saying whether it was sent or received.
  if (!existsSync(logFile)) return [];
  const entries = readFileSync(logFile, 'latin1').split(/^-{5,}.*$/m);
  return entries
    .filter((entry) => /message received/i.test(entry) && /^NOTIFY sip:/m.test(entry))
    .map((entry) => {
      const message = entry.slice(entry.search(/^NOTIFY sip:/m));
      const state = /^Subscription-State:\s*(.*)$/im.exec(message)?.[1]?.trim() ?? '';
      const split = message.search(/\r?\n\r?\n/);
      return { state, body: split < 0 ? '' : message.slice(split).trim() };
    });
}

describe('SUBSCRIBE and NOTIFY with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('dialog (BLF): idle at once, confirmed while alice is in a call, terminated when it ends; unsubscribing ends with a terminated NOTIFY', { timeout: 120_000 }, async () => {
    const log = join(work, 'blf-messages.log');
    const watcher = sipp('subscribe-two-changes.xml', [target(), '-s', '100', '-set', 'caller', 'watcher', '-set', 'event', 'dialog', '-set', 'accept', 'application/dialog-info+xml', '-trace_msg', '-message_file', log], { cwd: work, timeoutMs: 90_000 });
    await waitFor('the subscription', () => (subscriptions() === 1 ? true : undefined), 20_000);
    // alice calls 200: her channel makes PJSIP/alice in use, so extension 100 is.
    const alice = sipp('call-silent-wait-bye.xml', [target(), '-s', '200', '-set', 'caller', 'alice'], { cwd: work, timeoutMs: 60_000 });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel?.state === 'Up', 10_000);
    // The busy NOTIFY is out (a change waits for the NOTIFY in flight) before the call ends.
    await waitFor('the busy NOTIFY', () => (notifies(log).length >= 2 ? true : undefined), 20_000);
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(events, ofChannel('ChannelDestroyed', id), 10_000);
    const called = await alice.done;
    assert.equal(called.status, 0, called.output);
    const result = await watcher.done;
    assert.equal(result.status, 0, result.output);
    await waitFor('the subscription gone', () => (subscriptions() === 0 ? true : undefined), 10_000);

    const received = notifies(log);
    assert.equal(received.length, 4, JSON.stringify(received, null, 1));
    const states = received.map((notify) => /<state>(\w+)<\/state>/.exec(notify.body)?.[1]);
    assert.deepEqual(states, ['terminated', 'confirmed', 'terminated', 'terminated'], 'idle, busy, idle, then the final state');
    const versions = received.map((notify) => /version="(\d+)"/.exec(notify.body)?.[1]);
    assert.deepEqual(versions, ['0', '1', '2', '3'], 'the version counts the NOTIFYs');
    assert.match(received[0].body, /entity="sip:100@127\.0\.0\.1"/);
    assert.match(received[0].state, /^active;expires=\d+$/);
    assert.match(received[3].state, /^terminated/);
  });

  test('dialog (BLF): a registered phone ringing is an early dialog naming the caller; cancelled, it is idle again', { timeout: 120_000 }, async () => {
    const log = join(work, 'ringing-messages.log');
    const davePort = randomPort();
    const dave = sipp('ring-wait-cancel.xml', [], { cwd: work, port: davePort, timeoutMs: 90_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const registered = await sipp('register-contact-elsewhere.xml', [target(), '-s', 'dave', '-set', 'contact_port', String(davePort)], { cwd: work }).done;
    assert.equal(registered.status, 0, registered.output);
    const watcher = sipp('subscribe-two-changes.xml', [target(), '-s', '101', '-set', 'caller', 'watcher', '-set', 'event', 'dialog', '-set', 'accept', 'application/dialog-info+xml', '-trace_msg', '-message_file', log], { cwd: work, timeoutMs: 90_000 });
    await waitFor('the subscription', () => (subscriptions() === 1 ? true : undefined), 20_000);
    const originated = await server.ari(`/channels?endpoint=PJSIP/dave&app=blf-app&callerId=${encodeURIComponent('"Bob" <200>')}`, { method: 'POST' });
    assert.equal(originated.status, 200, await originated.clone().text());
    const id = ((await originated.json()) as { id: string }).id;
    await nextEvent(events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel?.state === 'Ringing', 20_000);
    await waitFor('the ringing NOTIFY', () => (notifies(log).length >= 2 ? true : undefined), 20_000);
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    const rang = await dave.done;
    assert.equal(rang.status, 0, rang.output);
    const result = await watcher.done;
    assert.equal(result.status, 0, result.output);
    const received = notifies(log);
    assert.deepEqual(received.map((notify) => /<state>(\w+)<\/state>/.exec(notify.body)?.[1]), ['terminated', 'early', 'terminated', 'terminated'], JSON.stringify(received, null, 1));
    assert.match(received[1].body, /<dialog id="101" direction="recipient">/);
    assert.match(received[1].body, /<remote>\s*<identity display="Bob">sip:200@127\.0\.0\.1<\/identity>\s*<target uri="sip:200@127\.0\.0\.1"\/>\s*<\/remote>/);
  });

  test('presence: PIDF closed while alice is unavailable, open while she is on the phone', { timeout: 120_000 }, async () => {
    const log = join(work, 'presence-messages.log');
    const watcher = sipp('subscribe-two-changes.xml', [target(), '-s', '100', '-set', 'caller', 'watcher', '-set', 'event', 'presence', '-set', 'accept', 'application/pidf+xml', '-trace_msg', '-message_file', log], { cwd: work, timeoutMs: 90_000 });
    await waitFor('the subscription', () => (subscriptions() === 1 ? true : undefined), 20_000);
    const alice = sipp('call-silent-wait-bye.xml', [target(), '-s', '200', '-set', 'caller', 'alice'], { cwd: work, timeoutMs: 60_000 });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel?.state === 'Up', 10_000);
    // The busy NOTIFY is out (a change waits for the NOTIFY in flight) before the call ends.
    await waitFor('the busy NOTIFY', () => (notifies(log).length >= 2 ? true : undefined), 20_000);
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await alice.done).status, 0);
    const result = await watcher.done;
    assert.equal(result.status, 0, result.output);
    const received = notifies(log);
    const basics = received.map((notify) => /<basic>(\w+)<\/basic>/.exec(notify.body)?.[1]);
    const notes = received.map((notify) => /<note>([^<]*)<\/note>/.exec(notify.body)?.[1]);
    assert.deepEqual(basics, ['closed', 'open', 'closed', 'closed'], JSON.stringify(received, null, 1));
    assert.deepEqual(notes.slice(0, 3), ['Unavailable', 'On the phone', 'Unavailable']);
  });

  test('message-summary to an AOR with mailboxes=: no messages, then PUT /ari/mailboxes → Messages-Waiting: yes with the counts', { timeout: 90_000 }, async () => {
    const log = join(work, 'mwi-messages.log');
    const bob = sipp('subscribe-one-change.xml', [target(), '-s', 'bob', '-set', 'caller', 'bob', '-set', 'event', 'message-summary', '-set', 'accept', 'application/simple-message-summary', '-trace_msg', '-message_file', log], { cwd: work, timeoutMs: 60_000 });
    await waitFor('the subscription', () => (subscriptions() === 1 ? true : undefined), 20_000);
    assert.equal((await server.ari('/mailboxes/bob@default?oldMessages=1&newMessages=2', { method: 'PUT' })).status, 204);
    const result = await bob.done;
    assert.equal(result.status, 0, result.output);
    const received = notifies(log);
    assert.equal(received.length, 3, JSON.stringify(received, null, 1));
    assert.match(received[0].body, /^Messages-Waiting: no\r?\nMessage-Account: sip:\*97@127\.0\.0\.1\r?\nVoice-Message: 0\/0 \(0\/0\)/);
    assert.match(received[1].body, /^Messages-Waiting: yes\r?\nMessage-Account: sip:\*97@127\.0\.0\.1\r?\nVoice-Message: 2\/1 \(0\/0\)/);
  });

  test('over TCP (SIPp -t t1, one connection): the NOTIFYs reach the subscriber', { timeout: 90_000 }, async () => {
    const log = join(work, 'mwi-tcp-messages.log');
    const bob = sipp('subscribe-one-change.xml', [target(), '-t', 't1', '-s', 'bob', '-set', 'caller', 'bob', '-set', 'event', 'message-summary', '-set', 'accept', 'application/simple-message-summary', '-trace_msg', '-message_file', log], { cwd: work, timeoutMs: 60_000 });
    await waitFor('the subscription', () => (subscriptions() === 1 ? true : undefined), 20_000);
    assert.equal((await server.ari('/mailboxes/bob@default?oldMessages=0&newMessages=5', { method: 'PUT' })).status, 204);
    const result = await bob.done;
    assert.equal(result.status, 0, result.output);
    const received = notifies(log);
    assert.equal(received.length, 3, JSON.stringify(received, null, 1));
    assert.match(received[1].body, /^Messages-Waiting: yes\r?\nMessage-Account: sip:\*97@127\.0\.0\.1\r?\nVoice-Message: 5\/0 \(0\/0\)/);
  });

  test('unsolicited MWI: carol (mailboxes=) gets a NOTIFY at her registered contact when she registers and when the mailbox changes', { timeout: 90_000 }, async () => {
    const log = join(work, 'unsolicited-messages.log');
    const phonePort = randomPort();
    // The phone's receiving side: two NOTIFYs, each a transaction of its own (SIPp as server, -m 2).
    const phone = sipp('notify-receive.xml', ['-m', '2', '-trace_msg', '-message_file', log], { cwd: work, port: phonePort, timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const registered = await sipp('register-contact-elsewhere.xml', [target(), '-s', 'carol', '-set', 'contact_port', String(phonePort)], { cwd: work }).done;
    assert.equal(registered.status, 0, registered.output);
    await waitFor('the first NOTIFY', () => (notifies(log).length >= 1 ? true : undefined), 20_000);
    assert.equal((await server.ari('/mailboxes/carol@default?oldMessages=0&newMessages=3', { method: 'PUT' })).status, 204);
    const result = await phone.done;
    assert.equal(result.status, 0, result.output);
    const received = notifies(log);
    assert.equal(received.length, 2, JSON.stringify(received, null, 1));
    assert.deepEqual(received.map((notify) => notify.state), ['active', 'active']);
    assert.match(received[0].body, /^Messages-Waiting: no\r?\nMessage-Account: sip:\*98@127\.0\.0\.1\r?\nVoice-Message: 0\/0 \(0\/0\)/);
    assert.match(received[1].body, /^Messages-Waiting: yes\r?\nMessage-Account: sip:\*98@127\.0\.0\.1\r?\nVoice-Message: 3\/0 \(0\/0\)/);
  });

  test('a refresh grants the new duration and NOTIFYs; unrefreshed, the subscription expires with terminated;reason=timeout', { timeout: 60_000 }, async () => {
    const run = sipp('subscribe-refresh-expire.xml', [target(), '-s', '100', '-set', 'caller', 'bob', '-set', 'event', 'dialog'], { cwd: work, timeoutMs: 30_000 });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    await waitFor('the subscription gone', () => (subscriptions() === 0 ? true : undefined), 10_000);
  });

  test('a NOTIFY answered 481 ends the subscription; a later change sends nothing', { timeout: 60_000 }, async () => {
    const run = sipp('subscribe-notify-481.xml', [target(), '-s', 'bob', '-set', 'caller', 'bob', '-set', 'event', 'message-summary'], { cwd: work });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    await waitFor('the subscription gone', () => (subscriptions() === 0 ? true : undefined), 10_000);
    const before = server.core.pjsip.stats().clientTransactions;
    assert.equal((await server.ari('/mailboxes/bob@default?oldMessages=4&newMessages=4', { method: 'PUT' })).status, 204);
    // The 481-answered NOTIFY's transaction may end meanwhile (Timer K): no more, never one more.
    assert.ok(server.core.pjsip.stats().clientTransactions <= before, 'no NOTIFY was started');
  });

  test('refusals: 489 with Allow-Events, 404 without a hint, 423 with Min-Expires, 400 for Expires: 0, 489 for an Accept without the type', { timeout: 60_000 }, async () => {
    const run = sipp('subscribe-refusals.xml', [target(), '-s', '100', '-set', 'caller', 'watcher', '-set', 'nohint', '200'], { cwd: work });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.equal(subscriptions(), 0);
  });
});
