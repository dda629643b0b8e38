// chan_pjsip's dialplan functions against real SIPp phones: two phones register for one AOR and
// `Dial(${PJSIP_DIAL_CONTACTS(alice)})` rings both (each SIPp sees its INVITE and the CANCEL when the
// caller goes); PJSIP_MEDIA_OFFER in a Dial pre-dial handler changes the SDP of the INVITE SIPp
// receives; and on an answered call PJSIP_SEND_SESSION_REFRESH sends an UPDATE and a re-INVITE, and
// PJSIP_DTMF_MODE a re-INVITE without telephone-event, each carrying the codecs PJSIP_MEDIA_OFFER
// set — with CHANNEL(rtp,…), CHANNEL(endpoint) and CHANNEL(pjsip,remote_addr) read through ARI; and
// the registered contacts read with PJSIP_AOR, PJSIP_CONTACT, PJSIP_ENDPOINT and PJSIP_PARSE_URI.
// Every wait is for an event or a state (a loaded machine): SIPp is awaited until it holds its
// port, each answer SIPp gives is followed through the channel's codec before the next offer.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { explained, HAVE_SIPP, nextEvent, randomPort, sipp, sippServerInSuite, startSippServer, tracedMessages, waitFor, type Json } from './sipp-peer.ts';

const SKIP = HAVE_SIPP ? false : 'sipp is not installed';
const APP = 'pjfunc';
/** bob's static contact: the SIPp the pre-dial handler's INVITE reaches. */
const BOB_PORT = randomPort();
/** Events may take long on a loaded machine. */
const EVENT_MS = 60_000;

const DIALPLAN = `[phones]
exten => ring,1,Dial(\${PJSIP_DIAL_CONTACTS(alice)})
 same => n,Hangup()
exten => offer,1,Dial(PJSIP/bob,,b(offer-handler^s^1))
 same => n,Hangup()
exten => refresh,1,Answer()
 same => n,Stasis(${APP})
 same => n,Hangup()

[offer-handler]
exten => s,1,Set(PJSIP_MEDIA_OFFER(audio)=alaw)
 same => n,Return()
`;

const setup = sippServerInSuite(SKIP, () =>
  startSippServer('pjfunc', DIALPLAN, {
    endpoint: {
      alice: { context: 'phones', allow: 'ulaw', aors: 'alice' },
      bob: { context: 'phones', allow: 'ulaw,alaw', aors: 'bob' },
      carol: { context: 'phones', allow: 'ulaw,alaw' },
    },
    aor: { alice: { max_contacts: 2 }, bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
  }, APP),
);

async function ari(path: string, method = 'GET'): Promise<Response> {
  return setup.server.ari(path, { method });
}

/** A channel variable (or function) read through ARI. */
async function variable(id: string, name: string): Promise<string> {
  const response = await ari(`/channels/${id}/variable?variable=${encodeURIComponent(name)}`);
  const body = await response.text();
  assert.equal(response.status, 200, `${name}: ${body}`);
  return (JSON.parse(body) as Json).value as string;
}

async function setVariable(id: string, name: string, value: string): Promise<number> {
  const response = await ari(`/channels/${id}/variable?variable=${encodeURIComponent(name)}&value=${encodeURIComponent(value)}`, 'POST');
  await response.body?.cancel();
  return response.status;
}

/** Messages without their retransmissions (a loaded machine answers late): one per CSeq. */
function once(messages: string[]): string[] {
  const seen = new Set<string>();
  return messages.filter((message) => {
    const cseq = /^CSeq:.*$/im.exec(message)?.[0] ?? message;
    if (seen.has(cseq)) return false;
    seen.add(cseq);
    return true;
  });
}

/** The m= line and rtpmaps of a message's SDP. */
function sdpOf(message: string): string {
  return message.split(/\r?\n/).filter((line) => /^(m=audio|a=rtpmap)/.test(line.trim())).map((line) => line.trim()).join('\n');
}

describe('chan_pjsip dialplan functions with SIPp phones', { skip: SKIP }, () => {
  test('Dial(${PJSIP_DIAL_CONTACTS(alice)}) rings both contacts alice registered', async () => {
    const phones = [randomPort(), randomPort()];
    // Each phone registers from its own port, one after the other (the registrar keeps that order).
    for (const port of phones) {
      const registered = await sipp('register-contact.xml', [setup.target(), '-s', 'alice'], { cwd: setup.work, port, timeoutMs: 60_000 }).done;
      assert.equal(registered.status, 0, registered.output);
    }
    await waitFor('both contacts', () => (setup.server.core.pjsip.contacts().filter((row) => row.aor === 'alice').length === 2 ? true : undefined), EVENT_MS);
    // The same addresses now play the phones the server calls.
    const ringing = phones.map((port) => sipp('ring-wait-cancel.xml', [], { cwd: setup.work, port, timeoutMs: 90_000, trace: true }));
    await Promise.all(ringing.map((run) => run.listening));
    const created = await ari(`/channels?endpoint=${encodeURIComponent('Local/ring@phones')}&app=${APP}`, 'POST');
    const body = await created.text();
    assert.equal(created.status, 200, body);
    const local = (JSON.parse(body) as Json).id as string;
    assert.equal(await variable(local, 'PJSIP_DIAL_CONTACTS(alice)'), phones.map((port) => `PJSIP/alice/sip:alice@127.0.0.1:${port}`).join('&'));
    // The registered contacts as res_pjsip's object functions show them (Asterisk's ids: aor;@md5(uri)).
    const uris = phones.map((port) => `sip:alice@127.0.0.1:${port}`);
    const ids = uris.map((uri) => `alice;@${createHash('md5').update(uri).digest('hex')}`);
    assert.equal(await variable(local, 'PJSIP_AOR(alice,contact)'), ids.join(','));
    assert.equal(await variable(local, 'PJSIP_AOR(alice,max_contacts)'), '2');
    assert.equal(await variable(local, `PJSIP_CONTACT(${ids[1]},uri)`), uris[1]);
    assert.equal(await variable(local, `PJSIP_CONTACT(${ids[1]},user_agent)`), 'SIPp');
    assert.equal(await variable(local, `PJSIP_CONTACT(${ids[1]},status)`), 'Unknown');
    assert.equal(await variable(local, 'PJSIP_ENDPOINT(alice,context)'), 'phones');
    assert.equal(await variable(local, `PJSIP_PARSE_URI(${uris[0]},port)`), String(phones[0]));
    // Both PJSIP channels ring before the caller goes.
    const rung = new Set<string>();
    await explained(ringing[0], () =>
      nextEvent(setup.events, (event) => {
        if (event.type === 'ChannelStateChange' && event.channel?.state === 'Ringing' && String(event.channel?.name).startsWith('PJSIP/alice-')) rung.add(event.channel.id as string);
        return rung.size === 2;
      }, EVENT_MS),
    );
    const hungUp = await ari(`/channels/${local}`, 'DELETE');
    await hungUp.body?.cancel();
    assert.equal(hungUp.status, 204);
    const runs = await Promise.all(ringing.map((run) => run.done));
    for (const [index, run] of runs.entries()) {
      assert.equal(run.status, 0, run.output);
      const [invite] = tracedMessages(run, /^INVITE /);
      assert.match(invite ?? '', new RegExp(`^INVITE sip:alice@127\\.0\\.0\\.1:${phones[index]} SIP/2\\.0`), 'each contact gets its own INVITE');
      assert.equal(once(tracedMessages(run, /^CANCEL /)).length, 1, 'and its CANCEL');
    }
  });

  test('PJSIP_MEDIA_OFFER in a pre-dial handler: the INVITE offers only what it wrote', async () => {
    const bob = sipp('busy-incoming.xml', [], { cwd: setup.work, port: BOB_PORT, timeoutMs: 90_000, trace: true });
    await bob.listening;
    const created = await ari(`/channels?endpoint=${encodeURIComponent('Local/offer@phones')}&app=${APP}`, 'POST');
    await created.body?.cancel();
    assert.equal(created.status, 200);
    const run = await bob.done;
    assert.equal(run.status, 0, run.output);
    const [invite] = tracedMessages(run, /^INVITE /);
    assert.ok(invite, run.messages.slice(-2000));
    const sdp = sdpOf(invite);
    assert.match(sdp, /^m=audio \d+ RTP\/AVP 8 101$/m, sdp);
    assert.match(sdp, /a=rtpmap:8 PCMA\/8000/);
    assert.doesNotMatch(sdp, /PCMU/);
  });

  test('PJSIP_SEND_SESSION_REFRESH (update, invite) and PJSIP_DTMF_MODE re-offer an answered call', async () => {
    const mediaPort = 2 * Math.floor(randomPort() / 2);
    const caller = sipp('call-session-refreshes.xml', [setup.target(), '-s', 'refresh', '-set', 'caller', 'carol', '-mp', String(mediaPort)], { cwd: setup.work, timeoutMs: 120_000, trace: true });
    await explained(caller, async () => {
      const started = await nextEvent(setup.events, (event) => event.type === 'StasisStart' && String(event.channel?.name).startsWith('PJSIP/carol-'), EVENT_MS);
      const id = started.channel.id as string;
      const codec = (expected: string) => waitFor(`the channel's codec ${expected}`, async () => ((await variable(id, 'CHANNEL(audionativeformat)')) === expected ? true : undefined), EVENT_MS);
      assert.equal(await variable(id, 'PJSIP_MEDIA_OFFER(audio)'), 'ulaw,alaw', 'the endpoint\'s allow');
      assert.equal(await setVariable(id, 'PJSIP_MEDIA_OFFER(audio)', 'alaw'), 204);
      // Refused (4xx) until the dialog is confirmed by SIPp's ACK; then the UPDATE goes.
      await waitFor('the UPDATE sent', async () => ((await setVariable(id, 'PJSIP_SEND_SESSION_REFRESH()', 'update')) === 204 ? true : undefined), EVENT_MS);
      await codec('alaw');
      assert.equal(await setVariable(id, 'PJSIP_MEDIA_OFFER(audio)', 'ulaw,alaw'), 204);
      assert.equal(await setVariable(id, 'PJSIP_SEND_SESSION_REFRESH()', 'invite'), 204);
      await codec('ulaw');
      assert.equal(await variable(id, 'PJSIP_DTMF_MODE()'), 'rfc4733');
      assert.equal(await setVariable(id, 'PJSIP_DTMF_MODE()', 'info'), 204);
      await codec('alaw');
      assert.equal(await variable(id, 'PJSIP_DTMF_MODE()'), 'info');
      assert.equal(await variable(id, 'PJSIP_MEDIA_OFFER(audio)'), 'ulaw,alaw');
      assert.equal(await variable(id, 'CHANNEL(endpoint)'), 'carol');
      assert.equal(await variable(id, 'CHANNEL(rtp,dest)'), `127.0.0.1:${mediaPort}`);
      assert.match(await variable(id, 'CHANNEL(rtp,src)'), /^[0-9.]+:\d+$/);
      assert.equal(await variable(id, 'CHANNEL(pjsip,remote_addr)'), `127.0.0.1:${caller.port}`);
      assert.equal(await variable(id, 'CHANNEL(aor)'), '');
      const hungUp = await ari(`/channels/${id}`, 'DELETE');
      await hungUp.body?.cancel();
      assert.equal(hungUp.status, 204);
    });
    const run = await caller.done;
    assert.equal(run.status, 0, run.output);
    const [update] = tracedMessages(run, /^UPDATE /);
    assert.match(sdpOf(update ?? ''), /^m=audio \d+ RTP\/AVP 8 101$/m, 'the UPDATE offers what PJSIP_MEDIA_OFFER wrote');
    const reinvites = once(tracedMessages(run, /^INVITE /)).slice(1);
    assert.equal(reinvites.length, 2, run.messages.slice(-3000));
    assert.match(sdpOf(reinvites[0]), /^m=audio \d+ RTP\/AVP 0 8 101$/m);
    assert.match(sdpOf(reinvites[1]), /^m=audio \d+ RTP\/AVP 0 8$/m, 'dtmf_mode info: no telephone-event');
    assert.doesNotMatch(sdpOf(reinvites[1]), /telephone-event/);
  });
});
