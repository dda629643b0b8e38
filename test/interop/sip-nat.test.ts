// Phones behind NAT and over TCP against SIPp (issue 19, item 8). A distinct loopback address plays
// the NAT: SIPp sends from 127.0.0.2 while its Via and Contact name 127.0.0.9 (where nobody
// listens), so only a server that answers and calls the source address reaches it.
// - rewrite_contact=yes: the registration's Contact and a call's remote target become the source
//   address; INVITE, BYE, MESSAGE and qualify OPTIONS go there; the 200 to REGISTER still lists the
//   Contact as written.
// - a phone registered over TCP is called over its registration connection, with ;transport=tcp
//   in our Contact.
// - rtp_symmetric=no keeps RTP going to the SDP's address when the phone's RTP comes from elsewhere;
//   rtp_symmetric=yes sends it where the RTP comes from.
// - force_rport=no: a response goes to the Via's port; force_rport=yes (default) to the source port.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, ofChannel, randomPort, SCENARIOS, sipp, waitFor, type Json } from './sipp-peer.ts';

let work: string;
let server: TestServer;
let events: EventSocket;

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;
const endpoint = (extra: Record<string, string> = {}) => ({ context: 'nat-in', allow: 'ulaw', ...extra });
const aor = { max_contacts: 1, remove_existing: 'yes' };

before(async () => {
  if (!HAVE_SIPP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-sip-nat-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, '[nat-in]\nexten => 100,1,Stasis(nat-app)\n');
  if (HAVE_SOX) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '6', 'sine', '1000', 'vol', '0.5']);
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: {
          natphone: endpoint({ aors: 'natphone', rewrite_contact: 'yes' }),
          natcaller: endpoint({ aors: 'natcaller', rewrite_contact: 'yes' }),
          natqualified: endpoint({ aors: 'natqualified', rewrite_contact: 'yes' }),
          tcpphone: endpoint({ aors: 'tcpphone' }),
          fixedrtp: endpoint({ aors: 'fixedrtp', rtp_symmetric: 'no' }),
          natrtp: endpoint({ aors: 'natrtp', rtp_symmetric: 'yes' }),
          noforce: endpoint({ aors: 'noforce', force_rport: 'no' }),
        },
        aor: { natphone: aor, natcaller: aor, natqualified: { ...aor, qualify_frequency: 60 }, tcpphone: aor, fixedrtp: aor, natrtp: aor, noforce: aor },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  events = await server.events('app=nat-app&subscribeAll=true');
});

after(async () => {
  if (!HAVE_SIPP) return;
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

async function endpointState(id: string): Promise<string> {
  return ((await (await server.ari(`/endpoints/PJSIP/${id}`)).json()) as { state: string }).state;
}

/** Originates to `endpoint` into nat-app; resolves with the channel once it is Up (the phone answered). */
async function originateAnswered(id: string): Promise<Json> {
  const response = await server.ari(`/channels?endpoint=PJSIP/${id}&app=nat-app`, { method: 'POST' });
  const channel = (await response.json()) as Json;
  assert.equal(response.status, 200, JSON.stringify(channel));
  const start = await nextEvent(events, (e) => e.type === 'StasisStart' && e.channel?.id === channel.id, 15_000);
  assert.equal(start.channel.state, 'Up');
  return channel;
}

async function hangUp(id: string): Promise<Json> {
  assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  return nextEvent(events, ofChannel('ChannelDestroyed', id));
}

describe('SIP phones behind NAT and over TCP (SIPp)', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('rewrite_contact=yes: a phone registered from behind NAT is called, hung up on and sent a MESSAGE at the address its REGISTER came from', { timeout: 90_000 }, async () => {
    const port = randomPort();
    const natted = `127.0.0.9:${randomPort()}`;
    const phone = { address: '127.0.0.2', port, cwd: work };
    const registered = await sipp('nat-register.xml', [target(), '-s', 'natphone', '-set', 'natted', natted], phone).done;
    assert.equal(registered.status, 0, registered.output);
    assert.equal(await endpointState('natphone'), 'online');

    const answering = sipp('nat-answer.xml', ['-set', 'natted', natted], phone);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const channel = await originateAnswered('natphone');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await hangUp(channel.id)).cause, 16);
    const answered = await answering.done;
    assert.equal(answered.status, 0, answered.output);

    const receiving = sipp('message-receive.xml', [], phone);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = await server.ari(`/endpoints/sendMessage?to=pjsip:natphone&from=${encodeURIComponent('sip:app@patchbay')}&body=behind%20nat`, { method: 'PUT' });
    assert.equal(sent.status, 202, await sent.text());
    const received = await receiving.done;
    assert.equal(received.status, 0, received.output);
  });

  test('rewrite_contact=yes: the qualify OPTIONS of a contact registered from behind NAT reach the source address; the contact is Reachable', { timeout: 60_000 }, async () => {
    const phone = { address: '127.0.0.2', port: randomPort(), cwd: work };
    const natted = `127.0.0.9:${randomPort()}`;
    const registered = await sipp('nat-register.xml', [target(), '-s', 'natqualified', '-set', 'natted', natted], phone).done;
    assert.equal(registered.status, 0, registered.output);
    // The first probe leaves within half a second; its retransmissions reach SIPp once it listens again.
    const answered = await sipp('options-answer.xml', [], phone).done;
    assert.equal(answered.status, 0, answered.output);
    const reachable = await nextEvent(events, (e) => e.type === 'ContactStatusChange' && e.contact_info?.aor === 'natqualified' && e.contact_info?.contact_status === 'Reachable');
    assert.match(reachable.contact_info.uri, /@127\.0\.0\.2:/, 'the contact as stored: the source address');
  });

  test('rewrite_contact=yes: a call from behind NAT is answered and the server\'s BYE reaches the address the INVITE came from', { timeout: 60_000 }, async () => {
    const natted = `127.0.0.9:${randomPort()}`;
    const run = sipp('nat-call-wait-bye.xml', [target(), '-s', '100', '-set', 'caller', 'natcaller', '-set', 'natted', natted], { address: '127.0.0.2', cwd: work });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && e.application === 'nat-app' && String(e.channel?.name).startsWith('PJSIP/natcaller-'));
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal((await hangUp(id)).cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('a phone registered over TCP is called over its registration connection; the INVITE\'s Contact says ;transport=tcp', { timeout: 60_000 }, async () => {
    const log = join(work, 'tcp-messages.log');
    const run = sipp('tcp-register.xml', [target(), '-s', 'tcpphone', '-t', 't1', '-oocsf', join(SCENARIOS, 'tcp-answer-ooc.xml'), '-d', '6000', '-trace_msg', '-message_file', log], { cwd: work });
    await waitFor('tcpphone registered', async () => ((await endpointState('tcpphone')) === 'online' ? true : undefined));
    const channel = await originateAnswered('tcpphone');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await hangUp(channel.id)).cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    // The INVITE came on the registration connection (nothing else reaches SIPp) and names TCP in its Contact.
    const invite = /INVITE sip:[\s\S]*?\r?\n\r?\n/.exec(readFileSync(log, 'latin1'))?.[0] ?? '';
    assert.match(invite, /^Contact:[^\r\n]*;transport=tcp/im, invite);
  });

  test('a call from a phone over TCP: our 200 OK\'s Contact says ;transport=tcp, and the server\'s BYE comes back on the same connection', { timeout: 60_000 }, async () => {
    const log = join(work, 'tcp-call-messages.log');
    const run = sipp('call-wait-bye.xml', [target(), '-s', '100', '-set', 'caller', 'tcpphone', '-t', 't1', '-trace_msg', '-message_file', log], { cwd: work });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/tcpphone-'));
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await hangUp(id)).cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const ok = /SIP\/2\.0 200 OK[\s\S]*?\r?\n\r?\n/.exec(readFileSync(log, 'latin1'))?.[0] ?? '';
    assert.match(ok, /^Contact:[^\r\n]*;transport=tcp/im, ok);
  });

  for (const [id, symmetric] of [['fixedrtp', false], ['natrtp', true]] as const) {
    test(`rtp_symmetric=${symmetric ? 'yes' : 'no'}: the phone's RTP comes from another port than its SDP names; the server's RTP ${symmetric ? 'moves to where it comes from' : 'keeps going to the SDP\'s port'}`, { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 60_000 }, async () => {
      const sdpSocket = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => sdpSocket.bind(0, '127.0.0.1', resolve));
      let atSdpPort = 0;
      sdpSocket.on('message', () => (atSdpPort += 1));
      try {
        const mediaPort = 2 * Math.floor(randomPort() / 2);
        const run = sipp('call-sdp-elsewhere.xml', [target(), '-s', '100', '-set', 'caller', id, '-set', 'sdp_port', String(sdpSocket.address().port), '-mp', String(mediaPort)], { cwd: work });
        const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith(`PJSIP/${id}-`));
        const channelId = start.channel.id as string;
        assert.equal((await server.ari(`/channels/${channelId}/answer`, { method: 'POST' })).status, 204);
        assert.equal((await server.ari(`/channels/${channelId}/play?media=${encodeURIComponent('tone:440')}`, { method: 'POST' })).status, 201);
        // SIPp streams from its media port once it sent the ACK; a few packets teach strict RTP the source.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const before = atSdpPort;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const inWindow = atSdpPort - before;
        if (symmetric) assert.equal(inWindow, 0, 'no RTP to the SDP\'s port once the source was learned');
        else assert.ok(inWindow >= 25, `${inWindow} RTP packets to the SDP's port in a second`);
        assert.equal((await hangUp(channelId)).cause, 16);
        const result = await run.done;
        assert.equal(result.status, 0, result.output);
      } finally {
        sdpSocket.close();
      }
    });
  }

  test('force_rport=no: the 200 to a REGISTER whose Via has no rport goes to the Via\'s port; with force_rport (the default) to the port it came from', { timeout: 30_000 }, async () => {
    const sender = dgram.createSocket('udp4');
    const viaPort = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => sender.bind(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => viaPort.bind(0, '127.0.0.1', resolve));
    const got = { sender: [] as string[], via: [] as string[] };
    sender.on('message', (data) => got.sender.push(data.toString('latin1')));
    viaPort.on('message', (data) => got.via.push(data.toString('latin1')));
    const register = (user: string): void => {
      const text = [
        `REGISTER sip:127.0.0.1:${server.core.pjsip.port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${viaPort.address().port};branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
        'Max-Forwards: 70',
        `From: <sip:${user}@127.0.0.1>;tag=${user}1`,
        `To: <sip:${user}@127.0.0.1>`,
        `Call-ID: ${user}-${Math.random().toString(36).slice(2)}`,
        'CSeq: 1 REGISTER',
        `Contact: <sip:${user}@127.0.0.1:${viaPort.address().port}>`,
        'Expires: 60',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      sender.send(Buffer.from(text), server.core.pjsip.port, '127.0.0.1');
    };
    try {
      register('noforce');
      await waitFor('the 200 at the Via\'s port', () => (got.via.some((m) => m.startsWith('SIP/2.0 200')) ? true : undefined), 5000);
      assert.deepEqual(got.sender, [], 'nothing to the source port');
      register('natphone');
      await waitFor('the 200 at the source port', () => (got.sender.some((m) => m.startsWith('SIP/2.0 200')) ? true : undefined), 5000);
      assert.match(got.sender[0], /^Via:.*;rport=\d+/im);
    } finally {
      sender.close();
      viaPort.close();
    }
  });
});
