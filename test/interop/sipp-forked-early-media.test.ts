// SIPp as a forking provider and as callees in early media, called from ARI: which fork's SDP the
// media follows with follow_early_media_fork (Asterisk's default yes, and no on the endpoint), a 183
// without SDP with and without ignore_183_without_sdp, and the compact header names a server with
// the system's compact_headers=yes writes, as the peer receives them. Each callee stays in early
// media until the test hangs up (CANCEL), so nothing depends on how fast a loaded machine runs: the
// test waits for the events it checks, and the fork's 180 is the marker that both 183s were read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RtpToneEnd } from '../helpers/rtp-tone.ts';
import { HAVE_SIPP, nextEvent, ofChannel, randomPort, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'forks';
const PORTS = { forker: randomPort(), stayer: randomPort(), plain: randomPort(), quiet: randomPort(), compact: randomPort() };
const endpoint = (name: keyof typeof PORTS, options: Json = {}): Json => ({ context: 'default', allow: 'ulaw', aors: name, ...options });
const aor = (name: keyof typeof PORTS): Json => ({ contact: `sip:${name}@127.0.0.1:${PORTS[name]}` });

/** A call from ARI to `name`'s SIPp callee, up to its Dial RINGING (the callee's marker); the Dial statuses seen until then (the first, '', the dial's start). */
async function ringing(setup: SippServer, name: string): Promise<{ id: string; statuses: string[] }> {
  const response = await setup.server.ari(`/channels?endpoint=PJSIP/${name}@${name}&app=${APP}`, { method: 'POST' });
  const channel = (await response.json()) as Json;
  assert.equal(response.status, 200, JSON.stringify(channel));
  const statuses: string[] = [];
  await nextEvent(setup.events, (event) => {
    if (event.type !== 'Dial' || event.peer?.id !== channel.id) return false;
    statuses.push(String(event.dialstatus));
    return event.dialstatus === 'RINGING';
  }, 30_000);
  return { id: String(channel.id), statuses };
}

/** Where the call's RTP goes now (CHANNEL(rtp,dest)). */
async function rtpDestination(setup: SippServer, id: string): Promise<string> {
  const response = await setup.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent('CHANNEL(rtp,dest)')}`);
  assert.equal(response.status, 200);
  return String(((await response.json()) as Json).value);
}

async function hangUp(setup: SippServer, id: string): Promise<void> {
  assert.equal((await setup.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 30_000);
}

describe('forked early media and 183s from SIPp callees', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  let setup: SippServer;
  before(async () => {
    setup = await startSippServer('forks', '[default]\n', {
      endpoint: {
        forker: endpoint('forker'),
        stayer: endpoint('stayer', { follow_early_media_fork: 'no' }),
        plain: endpoint('plain'),
        quiet: endpoint('quiet', { ignore_183_without_sdp: 'yes' }),
      },
      aor: { forker: aor('forker'), stayer: aor('stayer'), plain: aor('plain'), quiet: aor('quiet') },
    }, APP);
  });
  after(async () => setup?.close());

  for (const [name, follows] of [['forker', true], ['stayer', false]] as const) {
    test(`follow_early_media_fork=${follows ? 'yes (default)' : 'no'}: fork B's later 183 with SDP ${follows ? 'moves the early media to it' : 'leaves it on fork A'}`, { timeout: 90_000 }, async () => {
      const forkA = await new RtpToneEnd().open();
      const forkB = await new RtpToneEnd().open();
      try {
        const callee = sipp('fork-early-cancel.xml', ['-set', 'porta', String(forkA.port), '-set', 'portb', String(forkB.port)], { port: PORTS[name], cwd: setup.work, timeoutMs: 60_000 });
        await callee.listening;
        const { id, statuses } = await ringing(setup, name);
        assert.deepEqual(statuses, ['', 'PROGRESS', 'PROGRESS', 'RINGING'], 'both 183s are progress, whichever fork the media follows');
        assert.equal(await rtpDestination(setup, id), `127.0.0.1:${(follows ? forkB : forkA).port}`);
        await hangUp(setup, id);
        const run = await callee.done;
        assert.equal(run.status, 0, run.output);
      } finally {
        forkA.close();
        forkB.close();
      }
    });
  }

  for (const [name, ignored] of [['plain', false], ['quiet', true]] as const) {
    test(`a 183 without SDP ${ignored ? 'is no progress with ignore_183_without_sdp=yes' : 'is progress by default'}`, { timeout: 90_000 }, async () => {
      const callee = sipp('progress-no-sdp-cancel.xml', [], { port: PORTS[name], cwd: setup.work, timeoutMs: 60_000 });
      await callee.listening;
      const { id, statuses } = await ringing(setup, name);
      assert.deepEqual(statuses, ignored ? ['', 'RINGING'] : ['', 'PROGRESS', 'RINGING']);
      await hangUp(setup, id);
      const run = await callee.done;
      assert.equal(run.status, 0, run.output);
    });
  }
});

describe('compact_headers=yes in the system section', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  let setup: SippServer;
  before(async () => {
    setup = await startSippServer('compact', '[default]\n', { system: { system: { compact_headers: 'yes' } }, endpoint: { compact: endpoint('compact') }, aor: { compact: aor('compact') } }, APP);
  });
  after(async () => setup?.close());

  test('the INVITE and the CANCEL SIPp receives carry the compact header names, and the SDP no rtpmap for PCMU', { timeout: 90_000 }, async () => {
    const callee = sipp('ring-wait-cancel.xml', [], { port: PORTS.compact, cwd: setup.work, timeoutMs: 60_000, trace: true });
    await callee.listening;
    const response = await setup.server.ari(`/channels?endpoint=PJSIP/compact@compact&app=${APP}`, { method: 'POST' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    await nextEvent(setup.events, (event) => event.type === 'Dial' && event.peer?.id === channel.id && event.dialstatus === 'RINGING', 30_000);
    await hangUp(setup, String(channel.id));
    const run = await callee.done;
    assert.equal(run.status, 0, run.output);
    for (const method of ['INVITE', 'CANCEL']) {
      const [message] = tracedMessages(run, new RegExp(`^${method} `));
      assert.ok(message, `SIPp received a ${method}`);
      const names = message.split(/\r?\n\r?\n/)[0]!.split(/\r?\n/).slice(1).map((line) => line.slice(0, line.indexOf(':')));
      for (const name of ['v', 'f', 't', 'i', 'l']) assert.ok(names.includes(name), `${method}: ${name} in ${names.join(' ')}`);
      assert.ok(!names.some((name) => /^(Via|From|To|Call-ID|Contact|Content-Type|Content-Length|Supported)$/i.test(name)), `${method}: ${names.join(' ')}`);
      if (method === 'INVITE') {
        for (const name of ['m', 'c', 'k']) assert.ok(names.includes(name), `INVITE: ${name} in ${names.join(' ')}`);
        assert.match(message, /m=audio \d+ RTP\/AVP 0 101/);
        assert.doesNotMatch(message, /a=rtpmap:0 /);
        assert.match(message, /a=rtpmap:101 telephone-event\/8000/);
      }
    }
  });
});
