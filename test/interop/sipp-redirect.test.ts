// A callee answering our INVITE with 302 (SIPp), as Asterisk 22 takes it per the endpoint's
// redirect_method: `user` (the default) leaves the channel forwarded to the Contact's user and
// hangs it up with cause 23; Dial() from a SIPp phone then calls Local/<user>@<context> with the Dial
// events of a forward (or refuses it with option i: BUSY; option z cancels the timeout for it) and the caller reads HANGUPCAUSE 23 of the
// forwarding callee; an ARI originate simply fails.
// `uri_pjsip` sends the INVITE to the best Contact by q on the same channel, each URI once and five
// redirects at most.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippCall, sippListening, sippServerInSuite, startSippServer, tracedMessages, waitFor, writeSippTone, type Json, type SippRun } from './sipp-peer.ts';

const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT === 39_999 ? 20_000 : BOB_PORT + 1;
const APP = 'redir';

const DIALPLAN = `
[redir]
exten => 100,1,Dial(PJSIP/bob,30)
 same => n,Hangup()
exten => 101,1,Dial(PJSIP/bob,30,i)
 same => n,Hangup()
exten => 102,1,Dial(PJSIP/bobc,30)
 same => n,Hangup()
exten => 103,1,Dial(PJSIP/bobp,30)
 same => n,Hangup()
exten => 104,1,Dial(PJSIP/bob,30)
 same => n,Stasis(${APP})
 same => n,Hangup()
exten => 105,1,Dial(PJSIP/bob,3,z)
 same => n,Hangup()
exten => 200,1,Busy(5)
exten => 201,1,Ringing()
 same => n,Wait(6)
 same => n,Busy(5)
`;

const bob = { context: 'redir', allow: 'ulaw', aors: 'bob' };
const RES_PJSIP = {
  endpoint: {
    alice: { context: 'redir', allow: 'ulaw' },
    bob,
    bobp: { ...bob, redirect_method: 'uri_pjsip' },
    bobc: { ...bob, redirect_method: 'uri_core' },
    bobq: { ...bob, suppress_q850_reason_headers: 'yes' },
  },
  aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
};

const setup = sippServerInSuite(HAVE_SIPP ? false : 'sipp is not installed', async () => {
  const started = await startSippServer('sipp-redirect', DIALPLAN, RES_PJSIP, APP);
  if (HAVE_SOX) writeSippTone(started.work, 440, 5, 0.3);
  return started;
});

/** A SIPp callee on `port` running `scenario`, once it listens. */
async function callee(scenario: string, port: number, args: string[] = []): Promise<{ done: Promise<SippRun> }> {
  // A media port of its own: SIPp's default one may be another SIPp's.
  const run = sipp(scenario, ['-mp', String(2 * Math.floor(randomPort() / 2)), ...args], { cwd: setup.work, port, timeoutMs: 60_000, trace: true });
  await sippListening(port);
  return run;
}

/** Events for the app until `last` matches (inclusive). */
async function eventsUntil(last: (event: Json) => boolean): Promise<Json[]> {
  const seen: Json[] = [];
  for (;;) {
    const event = await nextEvent(setup.events, () => true, 60_000);
    seen.push(event);
    if (last(event)) return seen;
  }
}

const destroyedNamed = (prefix: string) => (event: Json) => event.type === 'ChannelDestroyed' && String(event.channel?.name).startsWith(prefix);

/** alice (SIPp) dials `exten`; the events until her channel is destroyed, and both SIPps' runs. */
async function dialFromPhone(exten: string, contact = `<sip:200@127.0.0.1:${BOB_PORT}>`): Promise<Json[]> {
  const phone = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', contact]);
  const caller = sippCall(setup, 'alice', 'call-expect-refusal.xml', exten);
  const events = await eventsUntil(destroyedNamed('PJSIP/alice-'));
  const [called, redirected] = await Promise.all([caller.done, phone.done]);
  assert.equal(called.status, 0, `caller: ${called.output}`);
  assert.equal(redirected.status, 0, `bob: ${redirected.output}`);
  await waitFor('every channel to end', () => (setup.server.core.channels.size === 0 ? true : undefined), 30_000);
  return events;
}

const indexOf = (events: Json[], match: (event: Json) => boolean, what: string): number => {
  const at = events.findIndex(match);
  assert.ok(at >= 0, `no ${what} in ${events.map((e) => e.type).join(', ')}`);
  return at;
};

describe('302 to our INVITE, as Asterisk 22 handles it', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test('redirect_method=user, Dial() from a phone: the callee ends with cause 23, Dial calls Local/200@redir with the Dial events of a forward', { timeout: 150_000 }, async () => {
    const events = await dialFromPhone('100');
    const forward = indexOf(events, (e) => e.type === 'Dial' && e.forward === '200', 'Dial event with forward 200');
    const dial = events[forward]!;
    assert.equal(dial.dialstatus, 'CANCEL');
    assert.match(dial.peer.name, /^PJSIP\/bob-/);
    assert.match(dial.caller.name, /^PJSIP\/alice-/);
    assert.match(dial.forwarded.name, /^Local\/200@redir-[0-9a-f]+;1$/);
    const forwardedId = dial.forwarded.id as string;
    // The forward's own Dial event follows (its dialstring the Local's data), then the forwarding callee is destroyed with cause 23.
    const started = indexOf(events, (e) => e.type === 'Dial' && e.peer?.id === forwardedId && e.dialstatus === '', "the forward's Dial event");
    assert.equal(events[started]!.dialstring, '200@redir');
    assert.ok(started > forward);
    const hangupRequest = events.find((e) => e.type === 'ChannelHangupRequest' && e.channel?.id === dial.peer.id);
    assert.equal(hangupRequest?.cause, 23, JSON.stringify(hangupRequest));
    const destroyed = indexOf(events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === dial.peer.id, "bob's ChannelDestroyed");
    assert.ok(destroyed > forward, 'the Dial event of the forward comes before the forwarding channel is destroyed');
    assert.equal(events[destroyed]!.cause, 23);
    assert.equal(events[destroyed]!.cause_txt, 'Redirected to new destination');
    assert.equal(events[destroyed]!.tech_cause, 302);
    assert.ok(events.some((e) => e.type === 'ChannelVarset' && e.channel?.id === forwardedId && e.variable === 'FORWARDERNAME' && e.value === dial.peer.name), 'FORWARDERNAME on the forward');
    // The forward rang Busy(): that is the Dial's outcome.
    const status = events.filter((e) => e.type === 'ChannelVarset' && e.variable === 'DIALSTATUS' && String(e.channel?.name).startsWith('PJSIP/alice-')).at(-1);
    assert.equal(status?.value, 'BUSY');
  });

  test('after the forward, the caller reads HANGUPCAUSE(<the forwarding callee>,ast) 23 and DIALSTATUS BUSY', { timeout: 150_000 }, async () => {
    const phone = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', `<sip:200@127.0.0.1:${BOB_PORT}>`]);
    const caller = sippCall(setup, 'alice', 'call-expect-refusal.xml', '104');
    const events = await eventsUntil((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'));
    const alice = events.at(-1)!.channel.id as string;
    const forwarding = events.find((e) => e.type === 'Dial' && e.forward === '200')!.peer.name as string;
    const read = async (variable: string): Promise<string> => {
      const response = await setup.server.ari(`/channels/${alice}/variable?variable=${encodeURIComponent(variable)}`);
      assert.equal(response.status, 200, variable);
      return ((await response.json()) as Json).value as string;
    };
    assert.equal(await read(`HANGUPCAUSE(${forwarding},ast)`), '23');
    assert.equal(await read('DIALSTATUS'), 'BUSY');
    assert.equal((await setup.server.ari(`/channels/${alice}`, { method: 'DELETE' })).status, 204);
    await eventsUntil(destroyedNamed('PJSIP/alice-'));
    for (const run of [await caller.done, await phone.done]) assert.equal(run.status, 0, run.output);
    await waitFor('every channel to end', () => (setup.server.core.channels.size === 0 ? true : undefined), 30_000);
  });

  test('Dial() option i: the forward is refused (Dial event with forward, no forwarded, then BUSY), DIALSTATUS BUSY, no Local channel', { timeout: 150_000 }, async () => {
    const events = await dialFromPhone('101');
    const forward = indexOf(events, (e) => e.type === 'Dial' && e.forward === '200', 'Dial event with forward 200');
    assert.equal(events[forward]!.forwarded, undefined);
    assert.equal(events[forward]!.dialstatus, 'CANCEL');
    const busy = indexOf(events, (e) => e.type === 'Dial' && e.dialstatus === 'BUSY', 'Dial event BUSY');
    assert.ok(busy > forward);
    assert.equal(events[busy]!.dialstring, '200@redir');
    assert.ok(!events.some((e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('Local/')), 'no Local channel');
    const status = events.filter((e) => e.type === 'ChannelVarset' && e.variable === 'DIALSTATUS' && String(e.channel?.name).startsWith('PJSIP/alice-')).at(-1);
    assert.equal(status?.value, 'BUSY');
  });

  test('Dial() option z: the forward cancels the 3 s timeout, so the forward (busy after 6 s) decides: DIALSTATUS BUSY, not NOANSWER', { timeout: 150_000 }, async () => {
    const events = await dialFromPhone('105', `<sip:201@127.0.0.1:${BOB_PORT}>`);
    const forward = indexOf(events, (e) => e.type === 'Dial' && e.forward === '201', 'Dial event with forward 201');
    const busy = indexOf(events, (e) => e.type === 'Dial' && e.dialstatus === 'BUSY', 'Dial event BUSY');
    assert.ok(busy > forward);
    assert.ok(String(events[busy]!.peer?.name).startsWith('Local/201@redir-'), String(events[busy]!.peer?.name));
    const status = events.filter((e) => e.type === 'ChannelVarset' && e.variable === 'DIALSTATUS' && String(e.channel?.name).startsWith('PJSIP/alice-')).at(-1);
    assert.equal(status?.value, 'BUSY');
  });

  test('redirect_method=uri_core, Dial() from a phone: the forward is PJSIP/<endpoint>/<Contact URI>, called as it is', { timeout: 150_000 }, async () => {
    const carol = await callee('busy-incoming.xml', CAROL_PORT);
    const events = await dialFromPhone('102', `<sip:200@127.0.0.1:${CAROL_PORT}>`);
    const dial = events[indexOf(events, (e) => e.type === 'Dial' && e.forward !== '' && e.forward !== undefined, 'Dial event with a forward')]!;
    assert.equal(dial.forward, `PJSIP/bobc/sip:200@127.0.0.1:${CAROL_PORT}`);
    assert.match(dial.forwarded.name, /^PJSIP\/bobc-/);
    const started = events.find((e) => e.type === 'Dial' && e.peer?.id === dial.forwarded.id && e.dialstatus === '');
    assert.equal(started?.dialstring, `bobc/sip:200@127.0.0.1:${CAROL_PORT}`);
    const run = await carol.done;
    assert.equal(run.status, 0, run.output);
    assert.match(tracedMessages(run, /^INVITE /)[0]!, /^INVITE sip:200@127\.0\.0\.1:\d+ SIP\/2\.0/);
    // carol was busy: so is the Dial.
    const status = events.filter((e) => e.type === 'ChannelVarset' && e.variable === 'DIALSTATUS' && String(e.channel?.name).startsWith('PJSIP/alice-')).at(-1);
    assert.equal(status?.value, 'BUSY');
  });

  test('redirect_method=user, ARI originate: no Dial() to follow it, the call fails with cause 23 (tech_cause 302)', { timeout: 150_000 }, async () => {
    const phone = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', `<sip:200@127.0.0.1:${BOB_PORT}>`]);
    const created = await setup.server.ari(`/channels?endpoint=PJSIP/bob&app=${APP}`, { method: 'POST' });
    assert.equal(created.status, 200);
    const id = ((await created.json()) as Json).id as string;
    const events = await eventsUntil((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    const request = events.find((e) => e.type === 'ChannelHangupRequest' && e.channel?.id === id);
    assert.equal(request?.cause, 23);
    assert.equal(request?.tech_cause, 302);
    assert.equal(events.at(-1)!.cause, 23);
    assert.ok(!events.some((e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('Local/')), 'nothing follows the forward');
    assert.equal((await phone.done).status, 0);
  });

  test('redirect_method=uri_pjsip: the INVITE follows the Contact of highest q on the same channel, which is answered', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 150_000 }, async () => {
    // The lower q comes first in the header: the order taken is the q's. Nobody listens at the low one.
    const contacts = `<sip:low@127.0.0.1:${randomPort()}>;q=0.2, <sip:carol@127.0.0.1:${CAROL_PORT}>;q=0.8`;
    const redirector = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', contacts]);
    const carol = await callee('answer-incoming.xml', CAROL_PORT);
    const created = await setup.server.ari(`/channels?endpoint=PJSIP/bobp&app=${APP}`, { method: 'POST' });
    assert.equal(created.status, 200);
    const id = ((await created.json()) as Json).id as string;
    await nextEvent(setup.events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up', 60_000);
    const hungUp = await setup.server.ari(`/channels/${id}`, { method: 'DELETE' });
    assert.equal(hungUp.status, 204);
    await eventsUntil((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    const [redirected, answered] = await Promise.all([redirector.done, carol.done]);
    assert.equal(redirected.status, 0, redirected.output);
    assert.equal(answered.status, 0, answered.output);
    const [first] = tracedMessages(redirected, /^INVITE /);
    const [followed] = tracedMessages(answered, /^INVITE /);
    assert.match(followed!, /^INVITE sip:carol@127\.0\.0\.1:\d+ SIP\/2\.0/);
    // The same call: its Call-ID and From tag, the next CSeq.
    const header = (message: string, name: string): string | undefined => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(message)?.[1]?.trim();
    assert.equal(header(followed!, 'Call-ID'), header(first!, 'Call-ID'));
    assert.equal(header(followed!, 'From'), header(first!, 'From'));
    assert.equal(header(followed!, 'CSeq'), '2 INVITE');
  });

  test('redirect_method=uri_pjsip, Dial() from a phone: the callee channel itself reaches the highest-q Contact, which answers; no forward', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 150_000 }, async () => {
    const contacts = `<sip:low@127.0.0.1:${randomPort()}>;q=0.1, <sip:carol@127.0.0.1:${CAROL_PORT}>;q=0.7`;
    const redirector = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', contacts]);
    const carol = await callee('answer-incoming.xml', CAROL_PORT);
    const caller = sippCall(setup, 'alice', 'call-hangup.xml', '103', ['-d', '500']);
    const events = await eventsUntil(destroyedNamed('PJSIP/alice-'));
    for (const [who, run] of [['alice', await caller.done], ['bob', await redirector.done], ['carol', await carol.done]] as const) assert.equal(run.status, 0, `${who}: ${run.output}`);
    const dials = events.filter((e) => e.type === 'Dial' && String(e.caller?.name).startsWith('PJSIP/alice-'));
    assert.ok(dials.every((e) => e.forward === '' && e.forwarded === undefined), 'no forward');
    assert.deepEqual(dials.map((e) => e.dialstatus), ['', 'ANSWER']);
    assert.equal(dials[0]!.peer.id, dials[1]!.peer.id, 'the same callee channel');
    assert.match(dials[1]!.peer.name, /^PJSIP\/bobp-/);
    await waitFor('every channel to end', () => (setup.server.core.channels.size === 0 ? true : undefined), 30_000);
  });

  test('redirect_method=uri_pjsip against a redirect server that never ends: five redirects followed, then the call fails with cause 23', { timeout: 150_000 }, async () => {
    const redirector = await callee('redirect-hops.xml', BOB_PORT);
    const created = await setup.server.ari(`/channels?endpoint=PJSIP/bobp&app=${APP}`, { method: 'POST' });
    assert.equal(created.status, 200);
    const id = ((await created.json()) as Json).id as string;
    const events = await eventsUntil((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    assert.equal(events.at(-1)!.cause, 23);
    const run = await redirector.done;
    assert.equal(run.status, 0, run.output);
    assert.equal(tracedMessages(run, /^INVITE /).length, 6);
  });

  test('redirect_method=uri_pjsip, a 302 back to the URI already tried (a loop): not followed, the call fails with cause 23', { timeout: 150_000 }, async () => {
    const redirector = await callee('redirect-302.xml', BOB_PORT, ['-set', 'contact', `<sip:bob@127.0.0.1:${BOB_PORT}>`]);
    const created = await setup.server.ari(`/channels?endpoint=PJSIP/bobp&app=${APP}`, { method: 'POST' });
    const id = ((await created.json()) as Json).id as string;
    const events = await eventsUntil((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id);
    assert.equal(events.at(-1)!.cause, 23);
    assert.equal((await redirector.done).status, 0);
  });
});

describe('suppress_q850_reason_headers (res_pjsip_rfc3326)', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  /** Originates a call to `endpoint`, hangs it up from ARI while it rings, and gives the CANCEL SIPp received. */
  async function cancelled(endpoint: string): Promise<string> {
    const phone = await callee('ring-wait-cancel.xml', BOB_PORT);
    const created = await setup.server.ari(`/channels?endpoint=${endpoint}&app=${APP}`, { method: 'POST' });
    const id = ((await created.json()) as Json).id as string;
    await nextEvent(setup.events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Ringing', 60_000);
    assert.equal((await setup.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(setup.events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === id, 60_000);
    const run = await phone.done;
    assert.equal(run.status, 0, run.output);
    return tracedMessages(run, /^CANCEL /)[0]!;
  }

  test('our CANCEL carries Reason: Q.850;cause=16 by default, and none with the option set', { timeout: 150_000 }, async () => {
    assert.match(await cancelled('PJSIP/bob'), /^Reason:\s*Q\.850;cause=16\s*$/im);
    assert.doesNotMatch(await cancelled('PJSIP/bobq'), /^Reason:/im);
  });
});
