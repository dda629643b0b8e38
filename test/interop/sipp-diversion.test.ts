// Redirecting information across SIP (res_pjsip_diversion), with SIPp on both sides: a provider's
// INVITE with Diversion is read by REDIRECTING() in the dialplan and carried by Dial() to the callee
// SIPp as Diversion; REDIRECTING() written in the dialplan goes out the same way, or as History-Info
// only with send_diversion=no / send_history_info=yes; a callee's 302 leaves the forward's callee a
// Diversion naming the forwarding callee, as app_dial's do_forward and Asterisk's 302 handling give.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, randomPort, sipp, sippCall, sippListening, sippServerInSuite, startSippServer, tracedMessages, waitFor, type Json, type SippRun } from './sipp-peer.ts';

const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT === 39_999 ? 20_000 : BOB_PORT + 1;
const APP = 'divert';

const SEEN = 'SEEN=${REDIRECTING(from-name)}|${REDIRECTING(from-num)}|${REDIRECTING(to-num)}|${REDIRECTING(reason)}|${REDIRECTING(count)}|${CALLERID(rdnis)}';
const DIALPLAN = `
[div]
exten => 100,1,Set(${SEEN})
 same => n,Dial(PJSIP/bob,30)
 same => n,Hangup()
exten => 101,1,Set(REDIRECTING(from-name)=Night Desk)
 same => n,Set(REDIRECTING(from-num)=4000)
 same => n,Set(REDIRECTING(to-num)=101)
 same => n,Set(REDIRECTING(reason)=cfnr)
 same => n,Set(REDIRECTING(count)=1)
 same => n,Dial(PJSIP/\${ARG_ENDPOINT},30)
 same => n,Hangup()
exten => 102,1,Set(ARG_ENDPOINT=bob)
 same => n,Goto(101,1)
exten => 103,1,Set(ARG_ENDPOINT=bobh)
 same => n,Goto(101,1)
exten => 104,1,Dial(PJSIP/bob,30)
 same => n,Set(${SEEN})
 same => n,Hangup()
exten => 105,1,Dial(PJSIP/bob,30)
 same => n,Set(${SEEN})
 same => n,Hangup()
exten => 106,1,Set(REDIRECTING(to-num,i)=106)
 same => n,Set(REDIRECTING(count,i)=1)
 same => n,Dial(PJSIP/bob,30)
 same => n,Hangup()
exten => 200,1,Dial(PJSIP/carol,30)
 same => n,Hangup()
`;

const phone = { context: 'div', allow: 'ulaw' };
const RES_PJSIP = {
  endpoint: {
    alice: phone,
    bob: { ...phone, aors: 'bob' },
    bobh: { ...phone, aors: 'bob', send_diversion: 'no', send_history_info: 'yes' },
    carol: { ...phone, aors: 'carol' },
  },
  aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` }, carol: { contact: `sip:carol@127.0.0.1:${CAROL_PORT}` } },
};

const setup = sippServerInSuite(HAVE_SIPP ? false : 'sipp is not installed', () => startSippServer('sipp-diversion', DIALPLAN, RES_PJSIP, APP));

/** A SIPp callee on `port` running `scenario`, once it listens; its messages are traced. */
async function callee(scenario: string, port: number, args: string[] = []): Promise<{ done: Promise<SippRun> }> {
  const run = sipp(scenario, ['-mp', String(2 * Math.floor(randomPort() / 2)), ...args], { cwd: setup.work, port, timeoutMs: 60_000, trace: true });
  await sippListening(port);
  return run;
}

/** alice (SIPp, `scenario`) calls `exten`; the events until her channel is destroyed, once every SIPp ended well. */
async function callFromAlice(scenario: string, exten: string, callees: Array<{ done: Promise<SippRun> }>, started?: { done: Promise<SippRun> }): Promise<{ events: Json[]; runs: SippRun[] }> {
  const caller = started ?? sippCall(setup, 'alice', scenario, exten);
  const events: Json[] = [];
  await nextEvent(setup.events, (event) => (events.push(event), event.type === 'ChannelDestroyed' && String(event.channel?.name).startsWith('PJSIP/alice-')), 60_000);
  const [called, ...runs] = await Promise.all([caller.done, ...callees.map((run) => run.done)]);
  assert.equal(called!.status, 0, `alice: ${called!.output}`);
  for (const run of runs) assert.equal(run.status, 0, run.output);
  await waitFor('every channel to end', () => (setup.server.core.channels.size === 0 ? true : undefined), 30_000);
  return { events, runs: started ? [called!, ...runs] : runs };
}

/** alice calls `exten` running `scenario` with her messages traced; the events until her channel is destroyed, and her run. */
async function tracedCallFromAlice(scenario: string, exten: string, callees: Array<{ done: Promise<SippRun> }>): Promise<{ events: Json[]; alice: SippRun; runs: SippRun[] }> {
  const caller = sipp(scenario, [setup.target(), '-s', exten, '-set', 'caller', 'alice', '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: setup.work, timeoutMs: 60_000, trace: true });
  const { events, runs } = await callFromAlice(scenario, exten, callees, caller);
  return { events, alice: runs[0]!, runs: runs.slice(1) };
}

/** The value of the last `SEEN` set on alice's channel. */
function seen(events: Json[]): string | undefined {
  return events.filter((e) => e.type === 'ChannelVarset' && e.variable === 'SEEN' && String(e.channel?.name).startsWith('PJSIP/alice-')).at(-1)?.value as string | undefined;
}

const headerLines = (message: string, name: string): string[] => message.split(/\r?\n/).filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`)).map((line) => line.slice(name.length + 1).trim());

describe('Diversion and REDIRECTING across SIP, as res_pjsip_diversion', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test("a provider's INVITE with Diversion: REDIRECTING() reads it, caller_rdnis shows it, and Dial() passes it on to the callee as Diversion", { timeout: 150_000 }, async () => {
    const bob = await callee('busy-incoming.xml', BOB_PORT);
    const { events, runs } = await callFromAlice('call-diverted-refusal.xml', '100', [bob]);
    // The Diversion's display name and user (cut at ';'), To's user, user-busy read as Asterisk names it (cfb), count 1.
    assert.equal(seen(events), 'Front Desk|5551000|100|cfb|1|5551000');
    const dial = events.find((e) => e.type === 'Dial' && e.dialstatus === '' && String(e.peer?.name).startsWith('PJSIP/bob-'));
    assert.equal(dial?.caller?.caller_rdnis, '5551000', JSON.stringify(dial?.caller));
    const [invite] = tracedMessages(runs[0]!, /^INVITE /);
    assert.ok(invite, 'bob got an INVITE');
    assert.deepEqual(headerLines(invite, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')), ['"Front Desk" <sip:5551000@HOST>;reason=user-busy']);
  });

  test('REDIRECTING() written in the dialplan: the callee gets Diversion with the reason in its SIP spelling, and no History-Info', { timeout: 150_000 }, async () => {
    const bob = await callee('busy-incoming.xml', BOB_PORT);
    const { runs } = await callFromAlice('call-expect-refusal.xml', '102', [bob]);
    const [invite] = tracedMessages(runs[0]!, /^INVITE /);
    assert.ok(invite, 'bob got an INVITE');
    assert.deepEqual(headerLines(invite, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')), ['"Night Desk" <sip:4000@HOST>;reason=no-answer']);
    assert.deepEqual(headerLines(invite, 'History-Info'), []);
  });

  test('send_diversion=no, send_history_info=yes: no Diversion; History-Info names the party redirected from (index 1) and to (index 1.1, cause 408)', { timeout: 150_000 }, async () => {
    const bob = await callee('busy-incoming.xml', BOB_PORT);
    const { runs } = await callFromAlice('call-expect-refusal.xml', '103', [bob]);
    const [invite] = tracedMessages(runs[0]!, /^INVITE /);
    assert.ok(invite, 'bob got an INVITE');
    assert.deepEqual(headerLines(invite, 'Diversion'), []);
    const history = headerLines(invite, 'History-Info').map((line) => line.replace(/@127\.0\.0\.1:\d+/, '@HOST'));
    assert.deepEqual(history, ['"Night Desk" <sip:4000@HOST>;index=1', '<sip:101@HOST;cause=408>;index=1.1']);
  });

  test("a callee's 302: the forward's callee gets Diversion naming the forwarding callee, and the caller's REDIRECTING is updated", { timeout: 150_000 }, async () => {
    const carol = await callee('busy-incoming.xml', CAROL_PORT);
    const bob = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', `<sip:200@127.0.0.1:${BOB_PORT}>`]);
    const { events, runs } = await callFromAlice('call-expect-refusal.xml', '104', [carol, bob]);
    assert.ok(events.some((e) => e.type === 'Dial' && e.forward === '200'), 'Dial followed the forward');
    // From the 302's To (bob has no caller id of his own), to the Contact's user, no reason given.
    assert.equal(seen(events), '|bob|200|unknown|1|bob');
    const [invite] = tracedMessages(runs[0]!, /^INVITE /);
    assert.ok(invite, 'carol got an INVITE');
    assert.deepEqual(headerLines(invite, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')), ['<sip:bob@HOST>;reason=unknown']);
  });

  test("a callee's 302 followed by Dial(): the unanswered caller gets 181 Call Is Being Forwarded with Diversion naming the forward's target, and every INVITE names histinfo in Supported", { timeout: 150_000 }, async () => {
    const carol = await callee('busy-incoming.xml', CAROL_PORT);
    const bob = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', `<sip:200@127.0.0.1:${BOB_PORT}>`]);
    const { alice, runs } = await tracedCallFromAlice('call-expect-181-refusal.xml', '104', [carol, bob]);
    const forwarded = tracedMessages(alice, /^SIP\/2\.0 181 /);
    assert.equal(forwarded.length, 1, 'one 181, at the forward');
    // res_pjsip_diversion: the redirected-to party on the URI of alice's own From, the reason's SIP name; histinfo in Supported.
    assert.deepEqual(headerLines(forwarded[0]!, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')), ['<sip:200@HOST>;reason=unknown']);
    assert.ok(headerLines(forwarded[0]!, 'Supported').some((line) => /\bhistinfo\b/.test(line)), forwarded[0]);
    for (const run of runs) {
      const [invite] = tracedMessages(run, /^INVITE /);
      assert.ok(invite && headerLines(invite, 'Supported').some((line) => /\bhistinfo\b/.test(line)), invite);
    }
  });

  test("a callee's 181 with Diversion: Dial() passes it on, the caller gets its own 181 naming the Diversion's party, and its REDIRECTING is the callee's", { timeout: 150_000 }, async () => {
    const bob = await callee('forward-181-busy.xml', BOB_PORT);
    const { events, alice } = await tracedCallFromAlice('call-expect-181-refusal.xml', '105', [bob]);
    // As res_pjsip_diversion reads a 181: from its To (bob), to its Diversion; the Diversion's reason is not read (unknown).
    assert.equal(seen(events), '|bob|300|unknown|1|bob');
    const forwarded = tracedMessages(alice, /^SIP\/2\.0 181 /);
    assert.equal(forwarded.length, 1, 'one 181');
    assert.deepEqual(headerLines(forwarded[0]!, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')), ['"Voicemail" <sip:300@HOST>;reason=unknown']);
  });

  test('REDIRECTING() written without i sends the unanswered caller a 181 each time (Diversion once count is set); with i, none', { timeout: 150_000 }, async () => {
    const bob = await callee('busy-incoming.xml', BOB_PORT);
    const { alice } = await tracedCallFromAlice('call-expect-181-refusal.xml', '102', [bob]);
    const forwarded = tracedMessages(alice, /^SIP\/2\.0 181 /);
    // The 181 names where the call went (the to party), and only once the count makes it a redirect.
    assert.equal(forwarded.length, 5, 'one 181 per REDIRECTING() written');
    assert.deepEqual(forwarded.map((message) => headerLines(message, 'Diversion').map((line) => line.replace(/@[^>;]+/, '@HOST')).join()), ['', '', '', '', '<sip:101@HOST>;reason=no-answer']);
    const bob2 = await callee('busy-incoming.xml', BOB_PORT);
    const quiet = await tracedCallFromAlice('call-expect-refusal.xml', '106', [bob2]);
    assert.deepEqual(tracedMessages(quiet.alice, /^SIP\/2\.0 181 /), []);
  });
});
