// pjsip.conf `type=acl` against SIPp phones on other loopback addresses, as res_pjsip_acl: a phone
// at a refused address gets 403 Forbidden and nothing else (no 100 Trying, no channel, no ARI
// event), one at a permitted address calls as usual; a named ACL of acl.conf (beside pjsip.conf)
// refuses too; a REGISTER whose Contact host a contact_deny names is refused; and a reload of
// pjsip.conf applies the new ACL to the next request.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, explained, nextEvent, randomPort, sipp, sippServerInSuite, startSippServer, writeSippTone } from './sipp-peer.ts';

const DIALPLAN = `
[phones]
exten => 100,1,Answer()
 same => n,Stasis(acl-watch)
`;

const PJSIP_CONF = `
[acl]
type=acl
deny=0.0.0.0/0.0.0.0
permit=127.0.0.0/255.255.255.0
deny=127.0.0.5

[lab]
type=acl
acl=lab

[contacts]
type=acl
contact_deny=192.0.2.0/24
contact_permit=192.0.2.128/25
`;

// A template, as Asterisk's acl.conf allows: its lines come first in the sections inheriting it.
const ACL_CONF = `
[base](!)
permit=0.0.0.0/0

[lab](base)
deny=127.0.0.6/32
`;

const skip = HAVE_SIPP ? false : 'sipp is not installed';

describe('pjsip.conf type=acl against SIPp (res_pjsip_acl)', { skip }, () => {
  let pjsipConf = '';
  const peer = sippServerInSuite(skip, () =>
    startSippServer('sipp-acl', DIALPLAN, { endpoint: { bob: { context: 'phones', allow: 'ulaw' }, carol: { context: 'phones', allow: 'ulaw', aors: 'carol' } }, aor: { carol: { max_contacts: 2 } } }, 'acl-watch', (work) => {
      pjsipConf = join(work, 'pjsip.conf');
      writeFileSync(pjsipConf, PJSIP_CONF);
      writeFileSync(join(work, 'acl.conf'), ACL_CONF);
      if (HAVE_SOX) writeSippTone(work, 440, 30, 0.3);
      return { sip: { pjsip_conf: pjsipConf } };
    }),
  );

  const call = (scenario: string, address: string) =>
    sipp(scenario, [peer.target(), '-s', '100', '-set', 'caller', 'bob', '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: peer.work, address, timeoutMs: 60_000, trace: true });

  test('refused addresses get 403 alone and no channel; a permitted one calls, and its channel is the first ARI sees', async () => {
    // 127.0.0.5: the section's own lines (deny after permit: the last match wins); 127.0.0.6: acl.conf's [lab].
    for (const address of ['127.0.0.5', '127.0.0.6']) {
      const refused = await call('acl-refused.xml', address).done;
      assert.equal(refused.status, 0, `${address}: ${refused.output}`);
      assert.match(refused.messages, /SIP\/2\.0 403 Forbidden/, address);
      assert.doesNotMatch(refused.messages, /SIP\/2\.0 100 /, `${address}: no transaction answered it`);
    }
    const run = sipp('call-wait-bye.xml', [peer.target(), '-s', '100', '-set', 'caller', 'bob', '-mp', String(2 * Math.floor(randomPort() / 2))], { cwd: peer.work, address: '127.0.0.1', timeoutMs: 60_000 });
    await explained(run, async () => {
      // Events come in order: had a refused call made a channel, its ChannelCreated would be first.
      const created = await nextEvent(peer.events, (event) => event.type === 'ChannelCreated', 30_000);
      assert.match(String(created.channel?.name), /^PJSIP\/bob-/);
      const started = await nextEvent(peer.events, (event) => event.type === 'StasisStart' && event.channel?.id === created.channel.id, 30_000);
      assert.equal(started.channel.caller.number, 'bob');
      const hangup = await peer.server.ari(`/channels/${created.channel.id as string}`, { method: 'DELETE' });
      assert.equal(hangup.status, 204);
    });
    assert.equal((await run.done).status, 0);
  });

  test('a REGISTER whose Contact host contact_deny names is refused 403; one on a permitted host registers', async () => {
    const refused = await sipp('acl-register-refused.xml', [peer.target(), '-s', 'carol', '-set', 'contact_host', '192.0.2.7'], { cwd: peer.work, timeoutMs: 60_000 }).done;
    assert.equal(refused.status, 0, refused.output);
    const excepted = await sipp('register-contact-elsewhere.xml', [peer.target(), '-s', 'carol', '-set', 'contact_port', '5099'], { cwd: peer.work, timeoutMs: 60_000 }).done;
    assert.equal(excepted.status, 0, excepted.output);
  });

  test('a reload of pjsip.conf applies the new ACL to the next request', async () => {
    const before = await sipp('options.xml', [peer.target()], { cwd: peer.work, address: '127.0.0.5', timeoutMs: 30_000, trace: true }).done;
    assert.notEqual(before.status, 0, 'OPTIONS from 127.0.0.5 is refused before the reload');
    assert.match(before.messages, /SIP\/2\.0 403 Forbidden/);
    writeFileSync(pjsipConf, PJSIP_CONF.replace('deny=127.0.0.5\n', ''));
    await peer.server.core.modules.reload('chan_pjsip.so');
    const after = await sipp('options.xml', [peer.target()], { cwd: peer.work, address: '127.0.0.5', timeoutMs: 30_000 }).done;
    assert.equal(after.status, 0, after.output);
  });
});
