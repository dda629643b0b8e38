// An endpoint's own ACL (permit/deny/acl/contact_* on type=endpoint) against SIPp phones on other
// loopback addresses, as Asterisk 22's distributor: a request identified to the endpoint from a
// refused address (or with a refused Contact host) is handled as from no endpoint — a 401 challenge,
// no channel, no ARI event — while the same endpoint calls as usual from a permitted address; a
// named ACL of acl.conf (beside pjsip.conf) refuses too; an OPTIONS is challenged, not answered; and
// an endpoint created through ARI's dynamic configuration with permit/deny is screened the same way;
// requests in a call's dialog that the ACL refuses are logged and answered, as in Asterisk.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, explained, nextEvent, randomPort, sipp, sippServerInSuite, startSippServer, writeSippTone } from './sipp-peer.ts';

const DIALPLAN = `
[phones]
exten => 100,1,Answer()
 same => n,Stasis(eacl-watch)
`;

const PJSIP_CONF = `
[bob]
type=endpoint
context=phones
allow=ulaw
deny=0.0.0.0/0.0.0.0
permit=127.0.0.0/255.255.255.0
deny=127.0.0.5

[dave]
type=endpoint
context=phones
allow=ulaw
acl=lab

[carol]
type=endpoint
context=phones
allow=ulaw
aors=carol
contact_deny=192.0.2.0/24
contact_permit=192.0.2.128/25

[carol]
type=aor
max_contacts=2

[erin]
type=endpoint
context=phones
allow=ulaw
contact_deny=192.0.2.0/24
`;

const ACL_CONF = `
[lab]
permit=0.0.0.0/0
deny=127.0.0.6/32
`;

const skip = HAVE_SIPP ? false : 'sipp is not installed';

describe('endpoint ACLs against SIPp (pjsip_distributor.c)', { skip }, () => {
  const peer = sippServerInSuite(skip, () =>
    startSippServer('sipp-eacl', DIALPLAN, {}, 'eacl-watch', (work) => {
      writeFileSync(join(work, 'pjsip.conf'), PJSIP_CONF);
      writeFileSync(join(work, 'acl.conf'), ACL_CONF);
      if (HAVE_SOX) writeSippTone(work, 440, 30, 0.3);
      return { sip: { pjsip_conf: join(work, 'pjsip.conf') } };
    }),
  );

  const media = () => String(2 * Math.floor(randomPort() / 2));

  test('refused addresses are challenged 401 as from no endpoint, with no channel; a permitted one calls, and its channel is the first ARI sees', async () => {
    // 127.0.0.5: bob's own lines (deny after permit: the last match wins); 127.0.0.6: dave's acl.conf [lab].
    for (const [caller, address] of [['bob', '127.0.0.5'], ['dave', '127.0.0.6']] as const) {
      const refused = await sipp('endpoint-acl-challenged.xml', [peer.target(), '-s', '100', '-set', 'caller', caller, '-mp', media()], { cwd: peer.work, address, timeoutMs: 60_000, trace: true }).done;
      assert.equal(refused.status, 0, `${caller}@${address}: ${refused.output}`);
      assert.match(refused.messages, /SIP\/2\.0 401 Unauthorized[\s\S]*WWW-Authenticate: Digest/, `${caller}@${address}`);
      assert.doesNotMatch(refused.messages, /SIP\/2\.0 (18\d|200|403) /, `${caller}@${address}: nothing tells the endpoint exists`);
    }
    for (const [caller, address] of [['bob', '127.0.0.1'], ['dave', '127.0.0.7']] as const) {
      const run = sipp('call-wait-bye.xml', [peer.target(), '-s', '100', '-set', 'caller', caller, '-mp', media()], { cwd: peer.work, address, timeoutMs: 60_000 });
      await explained(run, async () => {
        // Events come in order: had a refused call made a channel, its ChannelCreated would come first.
        const created = await nextEvent(peer.events, (event) => event.type === 'ChannelCreated', 30_000);
        assert.match(String(created.channel?.name), new RegExp(`^PJSIP/${caller}-`));
        const started = await nextEvent(peer.events, (event) => event.type === 'StasisStart' && event.channel?.id === created.channel.id, 30_000);
        assert.equal(started.channel.caller.number, caller);
        const hangup = await peer.server.ari(`/channels/${created.channel.id as string}`, { method: 'DELETE' });
        assert.equal(hangup.status, 204);
      });
      assert.equal((await run.done).status, 0);
    }
  });

  test("a REGISTER whose Contact host the endpoint's contact_deny names is challenged 401; one on a permitted host registers", async () => {
    const refused = await sipp('endpoint-acl-register-challenged.xml', [peer.target(), '-s', 'carol', '-set', 'contact_host', '192.0.2.7'], { cwd: peer.work, timeoutMs: 60_000, trace: true }).done;
    assert.equal(refused.status, 0, refused.output);
    const registered = await sipp('register-contact-elsewhere.xml', [peer.target(), '-s', 'carol', '-set', 'contact_port', '5099'], { cwd: peer.work, timeoutMs: 60_000 }).done;
    assert.equal(registered.status, 0, registered.output);
  });

  test("an OPTIONS from an address the endpoint's ACL refuses is challenged; from a permitted one it is answered", async () => {
    const refused = await sipp('options-challenged.xml', [peer.target(), '-s', 'bob', '-au', 'bob', '-ap', 'guess'], { cwd: peer.work, address: '127.0.0.5', timeoutMs: 30_000, trace: true }).done;
    assert.match(refused.messages, /SIP\/2\.0 401 Unauthorized/);
    assert.doesNotMatch(refused.messages, /SIP\/2\.0 200 /, 'no credentials pass for a refused endpoint');
    const answered = await sipp('options.xml', [peer.target()], { cwd: peer.work, address: '127.0.0.5', timeoutMs: 30_000 }).done;
    assert.equal(answered.status, 0, `an OPTIONS from no endpoint is answered, as before: ${answered.output}`);
  });

  test("requests in a call's dialog whose Contact host the endpoint's contact_deny refuses are answered as Asterisk's dialog layer does, the refusal logged", async () => {
    // pjsip_distributor.c checks the dialog's endpoint on every request, but pjsip's dialog layer
    // takes a request in a dialog before the authenticator: the re-INVITE and the BYE get their 200.
    const logged = peer.server.logLines.length;
    const run = sipp('endpoint-acl-in-dialog.xml', [peer.target(), '-s', '100', '-set', 'caller', 'erin', '-set', 'contact_host', '192.0.2.7', '-mp', media()], { cwd: peer.work, timeoutMs: 60_000, trace: true });
    await explained(run, async () => {
      const created = await nextEvent(peer.events, (event) => event.type === 'ChannelCreated' && /^PJSIP\/erin-/.test(String(event.channel?.name)), 30_000);
      const destroyed = await nextEvent(peer.events, (event) => event.type === 'ChannelDestroyed' && event.channel?.id === created.channel.id, 45_000);
      assert.equal(destroyed.cause, 16, 'the BYE ended the call (normal clearing)');
    });
    const done = await run.done;
    assert.equal(done.status, 0, done.output);
    assert.doesNotMatch(done.messages, /SIP\/2\.0 (401|403|481) /, 'nothing in the dialog was refused');
    const lines = peer.server.logLines.slice(logged).join('');
    assert.match(lines, /SIP Contact ACL: Rejecting '192\.0\.2\.7' due to a failure to pass ACL '\(BASELINE\)'/);
    assert.match(lines, /Request 'INVITE' from '<sip:erin@127\.0\.0\.1:\d+>' failed for '127\.0\.0\.1:\d+' \(callid: [^)]+\) - Not match Endpoint Contact ACL/);
  });

  test('an endpoint created through ARI with deny and permit fields: refused address challenged, permitted one calls', async () => {
    const created = await peer.server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/frank', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fields: [{ attribute: 'context', value: 'phones' }, { attribute: 'allow', value: 'ulaw' }, { attribute: 'deny', value: '0.0.0.0/0' }, { attribute: 'permit', value: '127.0.0.8' }] }),
    });
    assert.equal(created.status, 200, await created.text());
    const refused = await sipp('endpoint-acl-challenged.xml', [peer.target(), '-s', '100', '-set', 'caller', 'frank', '-mp', media()], { cwd: peer.work, address: '127.0.0.9', timeoutMs: 60_000, trace: true }).done;
    assert.equal(refused.status, 0, refused.output);
    assert.doesNotMatch(refused.messages, /SIP\/2\.0 (18\d|200|403) /);
    const run = sipp('call-wait-bye.xml', [peer.target(), '-s', '100', '-set', 'caller', 'frank', '-mp', media()], { cwd: peer.work, address: '127.0.0.8', timeoutMs: 60_000 });
    await explained(run, async () => {
      const created = await nextEvent(peer.events, (event) => event.type === 'ChannelCreated', 30_000);
      assert.match(String(created.channel?.name), /^PJSIP\/frank-/);
      const hangup = await peer.server.ari(`/channels/${created.channel.id as string}`, { method: 'DELETE' });
      assert.equal(hangup.status, 204);
    });
    assert.equal((await run.done).status, 0);
  });
});
