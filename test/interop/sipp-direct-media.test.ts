// Direct media (endpoint direct_media=yes, Asterisk's bridge_native_rtp) with two real SIPp phones:
// alice Dial()s bob; once the two are connected each is re-INVITEd with an offer whose c=/m= name
// the other's RTP address, so their media goes between them; an ARI snoop on alice needs her audio
// on the server, so both are re-INVITEd back to the server's own address (the port each was given
// first) before the call ends. Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HAVE_SIPP, explained, nextEvent, randomPort, sipp, sippServerInSuite, startSippServer, tracedMessages, waitFor, type Json } from './sipp-peer.ts';

const APP = 'direct-media-app';
const BOB_PORT = randomPort();
const skip = HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)';

const setup = sippServerInSuite(skip, () =>
  startSippServer(
    'sipp-direct-media',
    `[phones]\nexten => 200,1,Dial(PJSIP/bob)\n same => n,Hangup()\n`,
    {
      endpoint: {
        alice: { context: 'phones', allow: 'ulaw', direct_media: 'yes' },
        bob: { context: 'phones', allow: 'ulaw', aors: 'bob', direct_media: 'yes' },
      },
      aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  ),
);

/** The c= address and m= port of a message's SDP. */
function mediaOf(message: string | undefined): string {
  const address = /^c=IN IP4 (\S+)/m.exec(message ?? '')?.[1];
  const port = /^m=audio (\d+)/m.exec(message ?? '')?.[1];
  return `${address}:${port}`;
}

/** Whether a SIP message of a trace carries SDP. */
const withSdp = (message: string): boolean => /^m=audio/m.test(message);

test('two direct_media phones: each is re-INVITEd to the other\'s RTP address, and a snoop brings both back to the server', { skip, timeout: 150_000 }, async () => {
  const aliceMedia = 2 * Math.floor(randomPort() / 2);
  let bobMedia = 2 * Math.floor(randomPort() / 2);
  while (bobMedia === aliceMedia) bobMedia = 2 * Math.floor(randomPort() / 2);
  const bob = sipp('direct-media-callee.xml', [setup.target(), '-set', 'me', 'bob', '-mp', String(bobMedia)], { cwd: setup.work, port: BOB_PORT, timeoutMs: 90_000, trace: true });
  await bob.listening;
  const alice = sipp('direct-media-caller.xml', [setup.target(), '-s', '200', '-set', 'caller', 'alice', '-set', 'me', 'alice', '-mp', String(aliceMedia)], { cwd: setup.work, timeoutMs: 90_000, trace: true });
  const variable = async (id: string, name: string): Promise<string> => {
    const response = await setup.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent(name)}`);
    return response.status === 200 ? String(((await response.json()) as Json).value) : '';
  };
  await explained(alice, () =>
    explained(bob, async () => {
      const created = (name: string) => (event: Json) => event.type === 'ChannelCreated' && String(event.channel?.name).startsWith(name);
      const aliceId = (await nextEvent(setup.events, created('PJSIP/alice-'), 60_000)).channel.id as string;
      const bobId = (await nextEvent(setup.events, created('PJSIP/bob-'), 60_000)).channel.id as string;
      // Both legs point their far ends at each other (CHANNEL(rtp,direct), as chan_pjsip's).
      await waitFor('both legs direct', async () => ((await variable(aliceId, 'CHANNEL(rtp,direct)')) === `127.0.0.1:${bobMedia}` && (await variable(bobId, 'CHANNEL(rtp,direct)')) === `127.0.0.1:${aliceMedia}` ? true : undefined), 60_000);
      // The snoop needs alice's audio here: direct media ends on both legs.
      const snoop = await setup.server.ari(`/channels/${aliceId}/snoop?spy=both&app=${APP}`, { method: 'POST' });
      assert.equal(snoop.status, 200, await snoop.clone().text());
      await waitFor('both legs back', async () => ((await variable(aliceId, 'CHANNEL(rtp,direct)')) === '' && (await variable(bobId, 'CHANNEL(rtp,direct)')) === '' ? true : undefined), 60_000);
      // SIPp hangs up nothing itself: the call ends from here once both answered the way back.
      await waitFor('alice answered both re-INVITEs', async () => ((await variable(aliceId, 'CHANNEL(rtp,dest)')) !== '' ? true : undefined), 30_000);
      const ended = await setup.server.ari(`/channels/${aliceId}`, { method: 'DELETE' });
      assert.equal(ended.status, 204);
    }),
  );
  const [aliceRun, bobRun] = await Promise.all([alice.done, bob.done]);
  assert.equal(aliceRun.status, 0, aliceRun.output);
  assert.equal(bobRun.status, 0, bobRun.output);
  // Alice: the 200 to her INVITE names the server's port; the first re-INVITE bob's, the second the server's again.
  const aliceAnswer = tracedMessages(aliceRun, /^SIP\/2\.0 200/).find(withSdp);
  // The trace holds what SIPp sent too (her own INVITE first) and retransmissions: the server's offers, once each.
  const aliceOffers = [...new Set(tracedMessages(aliceRun, /^INVITE /).filter(withSdp))].slice(1);
  const serverForAlice = mediaOf(aliceAnswer);
  assert.notEqual(serverForAlice, `127.0.0.1:${bobMedia}`);
  assert.deepEqual(aliceOffers.map(mediaOf), [`127.0.0.1:${bobMedia}`, serverForAlice], 'alice is sent to bob, then back to the server');
  // Bob: the server's INVITE names its port; the re-INVITEs alice's, then the server's again.
  const bobOffers = [...new Set(tracedMessages(bobRun, /^INVITE /).filter(withSdp))];
  const serverForBob = mediaOf(bobOffers[0]);
  assert.deepEqual(bobOffers.slice(1).map(mediaOf), [`127.0.0.1:${aliceMedia}`, serverForBob], 'bob is sent to alice, then back to the server');
  // Each offer of ours is a new o= version (RFC 3264 §8), and the direct ones offer only the codec in use.
  const versions = aliceOffers.map((message) => Number(/^o=\S+ \S+ (\d+)/m.exec(message)?.[1]));
  assert.ok(versions[1]! > versions[0]!, `o= versions ${versions.join(', ')}`);
  assert.match(aliceOffers[0] ?? '', /^m=audio \d+ RTP\/AVP 0( 101)?\r?$/m);
});
