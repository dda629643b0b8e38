// Direct media (endpoint direct_media=yes, Asterisk's bridge_native_rtp) with two real SIPp phones:
// alice Dial()s bob; once the two are connected each is re-INVITEd with an offer whose c=/m= name
// the other's RTP address, so their media goes between them; an ARI snoop on alice needs her audio
// on the server, so both are re-INVITEd back to the server's own address (the port each was given
// first) before the call ends. The same with the two in an ARI application's mixing bridge, brought
// back by a recording of the bridge. Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SipCall } from '../../src/channels/pjsip/call.ts';
import { HAVE_SIPP, explained, nextEvent, randomPort, sipp, sippServerInSuite, startSippServer, tracedMessages, waitFor, type Json } from './sipp-peer.ts';

const APP = 'direct-media-app';
const BOB_PORT = randomPort();
let bridgeId = '';
const skip = HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)';

const setup = sippServerInSuite(skip, () =>
  startSippServer(
    'sipp-direct-media',
    `[phones]\nexten => 200,1,Dial(PJSIP/bob)\n same => n,Hangup()\nexten => 300,1,Stasis(${APP})\n`,
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

/**
 * Whether a SIP channel's last offer of ours names `port` (default: its own RTP port) and was answered:
 * sent (our SDP is it) and no offer open. A refused one restores the SDP before it, so never settles.
 */
function settled(id: string, port?: number): boolean {
  const call = setup.server.core.channels.get(id)?.driver as SipCall | undefined;
  const media = call?.sessionMedia;
  const expected = port ?? call?.stream?.localPort;
  return media !== undefined && media.exchange.open === 'none' && new RegExp(`^m=audio ${expected} `, 'm').test(media.localSdp ?? '');
}

/** CHANNEL(<item>) of a channel, read over ARI ('' when unreadable). */
async function variable(id: string, name: string): Promise<string> {
  const response = await setup.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent(name)}`);
  return response.status === 200 ? String(((await response.json()) as Json).value) : '';
}

/**
 * Alice (SIPp) calls `exten`, bob (SIPp) answers a call from the server; `connect` puts the two
 * together (given the ids of alice's channel, and `callBob`, which makes the server call bob and
 * gives his channel's id) and `back` starts what needs the media here. Checks what each phone was
 * offered: the other's RTP address, then the server's again.
 */
async function directAndBack(exten: string, connect: (aliceId: string) => Promise<string>, back: (aliceId: string, bobId: string) => Promise<void>): Promise<void> {
  const aliceMedia = 2 * Math.floor(randomPort() / 2);
  let bobMedia = 2 * Math.floor(randomPort() / 2);
  while (bobMedia === aliceMedia) bobMedia = 2 * Math.floor(randomPort() / 2);
  const bob = sipp('direct-media-callee.xml', [setup.target(), '-set', 'me', 'bob', '-mp', String(bobMedia)], { cwd: setup.work, port: BOB_PORT, timeoutMs: 90_000, trace: true });
  await bob.listening;
  const alice = sipp('direct-media-caller.xml', [setup.target(), '-s', exten, '-set', 'caller', 'alice', '-set', 'me', 'alice', '-mp', String(aliceMedia)], { cwd: setup.work, timeoutMs: 90_000, trace: true });
  await explained(alice, () =>
    explained(bob, async () => {
      const aliceId = (await nextEvent(setup.events, (event) => event.type === 'ChannelCreated' && String(event.channel?.name).startsWith('PJSIP/alice-'), 60_000)).channel.id as string;
      const bobId = await connect(aliceId);
      // Both legs point their far ends at each other (CHANNEL(rtp,direct), as chan_pjsip's), and both phones answered.
      await waitFor('both legs direct', async () => ((await variable(aliceId, 'CHANNEL(rtp,direct)')) === `127.0.0.1:${bobMedia}` && (await variable(bobId, 'CHANNEL(rtp,direct)')) === `127.0.0.1:${aliceMedia}` ? true : undefined), 60_000);
      await waitFor('both direct offers answered', () => (settled(aliceId, bobMedia) && settled(bobId, aliceMedia) ? true : undefined), 60_000);
      await back(aliceId, bobId);
      await waitFor('both legs back', async () => ((await variable(aliceId, 'CHANNEL(rtp,direct)')) === '' && (await variable(bobId, 'CHANNEL(rtp,direct)')) === '' ? true : undefined), 60_000);
      // Hung up from here once both phones answered the way back (the scenarios end on a BYE).
      await waitFor('both offers back answered', () => (settled(aliceId) && settled(bobId) ? true : undefined), 60_000);
      assert.equal((await setup.server.ari(`/channels/${aliceId}`, { method: 'DELETE' })).status, 204);
      if (exten !== '200') assert.equal((await setup.server.ari(`/channels/${bobId}`, { method: 'DELETE' })).status, 204);
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
}

test('two direct_media phones: each is re-INVITEd to the other\'s RTP address, and a snoop brings both back to the server', { skip, timeout: 150_000 }, async () => {
  await directAndBack(
    '200',
    async () => (await nextEvent(setup.events, (event) => event.type === 'ChannelCreated' && String(event.channel?.name).startsWith('PJSIP/bob-'), 60_000)).channel.id as string,
    async (aliceId) => {
      // The snoop needs alice's audio here: direct media ends on both legs.
      const snoop = await setup.server.ari(`/channels/${aliceId}/snoop?spy=both&app=${APP}`, { method: 'POST' });
      assert.equal(snoop.status, 200, await snoop.text());
    },
  );
});

test('an ARI application\'s two-party bridge goes direct, and a recording of the bridge brings the media back', { skip, timeout: 150_000 }, async () => {
  await directAndBack(
    '300',
    async (aliceId) => {
      await nextEvent(setup.events, (event) => event.type === 'StasisStart' && event.channel?.id === aliceId, 60_000);
      assert.equal((await setup.server.ari(`/channels/${aliceId}/answer`, { method: 'POST' })).status, 204);
      const created = await setup.server.ari(`/channels?endpoint=PJSIP/bob&app=${APP}`, { method: 'POST' });
      const bobId = ((await created.json()) as Json).id as string;
      await nextEvent(setup.events, (event) => event.type === 'ChannelStateChange' && event.channel?.id === bobId && event.channel.state === 'Up', 60_000);
      const bridge = await setup.server.ari('/bridges?type=mixing', { method: 'POST' });
      bridgeId = ((await bridge.json()) as Json).id as string;
      assert.equal((await setup.server.ari(`/bridges/${bridgeId}/addChannel?channel=${aliceId},${bobId}`, { method: 'POST' })).status, 204);
      return bobId;
    },
    async () => {
      const recording = await setup.server.ari(`/bridges/${bridgeId}/record?name=direct-back&format=wav`, { method: 'POST' });
      assert.equal(recording.status, 201, await recording.text());
    },
  );
  assert.equal((await setup.server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' })).status, 204);
});
