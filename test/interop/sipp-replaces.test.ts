// An INVITE with Replaces (RFC 3891) from a real peer, SIPp: before, only the raw test phone sent
// one (sip-pbx.test.ts). alice (SIPp) calls bob (SIPp) through Dial(); a second phone of alice's
// (SIPp) takes the call over with Replaces naming it by the Call-ID and tags the server reports
// (CHANNEL(pjsip,call-id/local_tag/remote_tag)): the desk phone is answered 200, alice gets BYE,
// bob stays, and bob's hang-up reaches the desk phone. Skipped when sipp or sox is not installed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, nextEvent as nextEventOn, randomPort, sipp as runSipp, startSippServer, tracedMessages, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'replaces-app';
const BOB_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer(
    'sipp-replaces',
    '[replaces-in]\nexten => 300,1,Dial(PJSIP/bob,20)\n same => n,Hangup()\nexten => 301,1,Answer()\n same => n,Wait(60)\n',
    {
      endpoint: { alice: { context: 'replaces-in', allow: 'ulaw', aors: 'alice' }, bob: { context: 'replaces-in', allow: 'ulaw', aors: 'bob' } },
      aor: { alice: { max_contacts: 2 }, bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
  writeSippTone(setup.work, 1000, 4, 0.5);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const sipp = (scenario: string, args: string[], port?: number): ReturnType<typeof runSipp> => runSipp(scenario, args, { cwd: setup.work, timeoutMs: 45_000, trace: true, ...(port ? { port } : {}) });
const named = (prefix: string) => (channel: Json | undefined) => String(channel?.name ?? '').startsWith(prefix);

/** CHANNEL(pjsip,`item`) of channel `id`, read over ARI. */
async function pjsipItem(id: string, item: string): Promise<string> {
  const response = await setup.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent(`CHANNEL(pjsip,${item})`)}`);
  assert.equal(response.status, 200, `CHANNEL(pjsip,${item})`);
  return ((await response.json()) as Json).value as string;
}

describe('INVITE with Replaces from SIPp', { skip: !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false }, () => {
  test('a second phone takes over alice\'s call with bob: 200 for it, BYE for alice, bob\'s hang-up reaches it', { timeout: 90_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], BOB_PORT);
    // bob's SIPp listens before alice's call reaches Dial (it binds its port at start).
    await bob.listening;
    const alice = sipp('call-wait-bye.xml', [setup.target(), '-s', '300', '-set', 'caller', 'alice']);
    const dial = await nextEvent((e) => e.type === 'Dial' && named('PJSIP/bob-')(e.peer) && e.dialstatus === 'ANSWER');
    const aliceId = dial.caller?.id as string;
    assert.ok(named('PJSIP/alice-')(dial.caller), 'alice dialled bob');
    const [callId, serverTag, aliceTag] = await Promise.all(['call-id', 'local_tag', 'remote_tag'].map((item) => pjsipItem(aliceId, item)));
    const desk = sipp('call-replaces.xml', [setup.target(), '-s', '300', '-set', 'caller', 'alice', '-set', 'replaces', `${callId};to-tag=${serverTag};from-tag=${aliceTag}`]);
    const replaced = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === aliceId);
    assert.ok(replaced, 'alice\'s channel ended');
    const aliceRun = await alice.done;
    assert.equal(aliceRun.status, 0, `alice got BYE: ${aliceRun.output}`);
    const [bye] = tracedMessages(aliceRun, /^BYE /);
    assert.ok(bye, 'the server sent alice BYE');
    // bob's channel is still up, now with the desk phone: its hang-up ends the desk's call.
    const bobChannel = (((await (await setup.server.ari('/channels')).json()) as Json[]).find((c) => named('PJSIP/bob-')(c)));
    assert.ok(bobChannel, 'bob\'s channel survived the takeover');
    assert.equal(bobChannel.state, 'Up');
    assert.equal((await setup.server.ari(`/channels/${bobChannel.id}`, { method: 'DELETE' })).status, 204);
    const deskRun = await desk.done;
    assert.equal(deskRun.status, 0, `the desk phone was answered and got BYE: ${deskRun.output}`);
    const [ok] = tracedMessages(deskRun, /^SIP\/2\.0 200/);
    assert.match(ok ?? '', /^m=audio \d+ RTP\/AVP 0/m, 'the takeover answered with SDP');
    const bobRun = await bob.done;
    assert.equal(bobRun.status, 0, bobRun.output);
  });

  test('a Replaces naming a call in no bridge (running dialplan) is refused 503; the call stays (Asterisk would masquerade, docs/differences.md)', { timeout: 90_000 }, async () => {
    const alice = sipp('call-wait-bye.xml', [setup.target(), '-s', '301', '-set', 'caller', 'alice']);
    const up = await nextEvent((e) => e.type === 'ChannelStateChange' && named('PJSIP/alice-')(e.channel) && e.channel?.state === 'Up');
    const aliceId = up.channel.id as string;
    const [callId, serverTag, aliceTag] = await Promise.all(['call-id', 'local_tag', 'remote_tag'].map((item) => pjsipItem(aliceId, item)));
    const desk = sipp('call-replaces-refused.xml', [setup.target(), '-s', '301', '-set', 'caller', 'alice', '-set', 'replaces', `${callId};to-tag=${serverTag};from-tag=${aliceTag}`]);
    const deskRun = await desk.done;
    assert.equal(deskRun.status, 0, `the desk phone was refused 503: ${deskRun.output}`);
    const still = await setup.server.ari(`/channels/${aliceId}`);
    assert.equal(still.status, 200, "alice's call goes on");
    assert.equal((await setup.server.ari(`/channels/${aliceId}`, { method: 'DELETE' })).status, 204);
    const aliceRun = await alice.done;
    assert.equal(aliceRun.status, 0, `alice got BYE: ${aliceRun.output}`);
  });
});
