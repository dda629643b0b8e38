// pjsip.conf options a peer sees, checked with SIPp. A transport behind NAT with local networks, as Asterisk's res_pjsip_nat writes it, against two
// SIPp peers: 127.0.0.2 is inside `local_net` (a phone on the LAN, with Patchbay's own 127.0.0.1),
// 127.0.0.3 is not (a provider on the internet). The transport has external_signaling_address / external_signaling_port /
// external_media_address (documentation addresses nobody listens on: only what is written in the
// messages is checked, SIPp answers to the source address). The LAN peer sees only the local
// address in Contact, Via and SDP; the internet peer sees the external ones — in the Contact of our
// responses and of our requests, the Via of our requests, and the SDP's c= and o= lines.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, ofChannel, randomPort, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const LAN = '127.0.0.2';
const WAN = '127.0.0.3';
const EXTERNAL_SIGNALING = '198.51.100.7';
const EXTERNAL_PORT = 5099;
const EXTERNAL_MEDIA = '198.51.100.8';

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer(
    'sip-local-net',
    '[from-peers]\nexten => 100,1,Stasis(localnet-app)\n',
    {
      transport: {
        'transport-nat': {
          protocol: 'udp',
          bind: '127.0.0.1:0',
          external_signaling_address: EXTERNAL_SIGNALING,
          external_signaling_port: String(EXTERNAL_PORT),
          external_media_address: EXTERNAL_MEDIA,
          // Our own address is local too (as 192.168.0.0/16 holds both the server and the phones of a LAN):
          // only a local address in SDP is replaced by the external one (Asterisk's rule).
          local_net: `127.0.0.1/32, ${LAN}/32`,
        },
        'transport-tcp': { protocol: 'tcp', bind: '127.0.0.1:0' },
      },
      endpoint: {
        lan: { context: 'from-peers', allow: 'ulaw', transport: 'transport-nat', aors: 'lan' },
        wan: { context: 'from-peers', allow: 'ulaw', transport: 'transport-nat', aors: 'wan' },
        shortnonce: { context: 'from-peers', allow: 'ulaw', auth: 'shortnonce', aors: 'shortnonce' },
        guarded: { context: 'from-peers', allow: 'ulaw', auth: 'guarded' },
        probe: { context: 'from-peers', allow: 'ulaw', auth: 'guarded', allow_unauthenticated_options: 'yes' },
        'carol@example.net': { context: 'from-peers', allow: 'ulaw', auth: 'carol', aors: 'carol@example.net' },
      },
      // SIPp writes the server's address as the domain of From and To: it stands for example.net.
      domain_alias: { '127.0.0.1': { domain: 'example.net' } },
      aor: { lan: { max_contacts: 1 }, wan: { max_contacts: 1 }, shortnonce: { max_contacts: 1 }, 'carol@example.net': { max_contacts: 1 } },
      auth: {
        shortnonce: { auth_type: 'userpass', username: 'shortnonce', password: 'fleeting', nonce_lifetime: '3' },
        guarded: { auth_type: 'userpass', username: 'guarded', password: 'sentinel' },
        carol: { auth_type: 'userpass', username: 'carol', password: 'aliased' },
      },
      global: { global: { max_forwards: '42', keep_alive_interval: '1' } },
      identify: { lan: { endpoint: 'lan', match: LAN }, wan: { endpoint: 'wan', match: WAN } },
    },
    'localnet-app',
  );
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** Header lines of a traced SIP message (folded, case-insensitive name). */
function header(message: string, name: string): string {
  const line = message.split(/\r?\n/).find((text) => text.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  assert.ok(line, `no ${name} in:\n${message}`);
  return line.slice(name.length + 1).trim();
}

/** The SDP lines of a traced message that start with `prefix`. */
function sdpLines(message: string, prefix: string): string[] {
  return message.split(/\r?\n/).filter((line) => line.startsWith(prefix));
}

/** The peer at `address` calls extension 100; the app answers and hangs up; resolves with what the peer received. */
async function callIn(address: string): Promise<{ ok: string; bye: string }> {
  const run = sipp('call-silent-wait-bye.xml', [peer.target(), '-s', '100', '-set', 'caller', `peer-${address}`], { cwd: peer.work, address, port: randomPort(), timeoutMs: 30_000, trace: true });
  const start = await nextEvent(peer.events, (event) => event.type === 'StasisStart', 20_000);
  const id = (start.channel as Json).id as string;
  assert.equal((await peer.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  await nextEvent(peer.events, (event) => event.type === 'ChannelStateChange' && event.channel?.id === id && event.channel.state === 'Up', 20_000);
  assert.equal((await peer.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  await nextEvent(peer.events, ofChannel('ChannelDestroyed', id), 20_000);
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  const [ok] = tracedMessages(result, /^SIP\/2\.0 200/);
  const [bye] = tracedMessages(result, /^BYE /);
  assert.ok(ok && bye, result.messages);
  return { ok, bye };
}

/** An originated call to the peer at `address` (a static contact there); resolves with the INVITE and BYE it received. */
async function callOut(endpoint: string, address: string): Promise<{ invite: string; bye: string }> {
  const port = randomPort();
  const run = sipp('nat-answer.xml', ['-s', endpoint, '-set', 'natted', `${address}:${port}`], { cwd: peer.work, address, port, timeoutMs: 30_000, trace: true });
  // SIPp binds its socket as it starts: give it a moment before the INVITE is on its way (the INVITE is retransmitted anyway).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const response = await peer.server.ari(`/channels?endpoint=${encodeURIComponent(`PJSIP/${endpoint}/sip:${endpoint}@${address}:${port}`)}&app=localnet-app`, { method: 'POST' });
  const channel = (await response.json()) as Json;
  assert.equal(response.status, 200, JSON.stringify(channel));
  await nextEvent(peer.events, (event) => event.type === 'StasisStart' && event.channel?.id === channel.id, 20_000);
  assert.equal((await peer.server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
  await nextEvent(peer.events, ofChannel('ChannelDestroyed', channel.id), 20_000);
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  const [invite] = tracedMessages(result, /^INVITE /);
  const [bye] = tracedMessages(result, /^BYE /);
  assert.ok(invite && bye, result.messages);
  return { invite, bye };
}

describe('local_net with external addresses (SIPp on two addresses)', { skip: !HAVE_SIPP && 'sipp not installed' }, () => {
  test('a peer inside local_net sees the local address in the 200\'s Contact and SDP and in the BYE\'s Via', async () => {
    const local = `127.0.0.1:${peer.server.core.pjsip.port}`;
    const { ok, bye } = await callIn(LAN);
    assert.match(header(ok, 'Contact'), new RegExp(`@${local.replace(/\./g, '\\.')}[;>]`));
    assert.deepEqual(sdpLines(ok, 'c='), ['c=IN IP4 127.0.0.1']);
    assert.match(sdpLines(ok, 'o=')[0] ?? '', / IN IP4 127\.0\.0\.1$/);
    assert.match(header(bye, 'Via'), new RegExp(`^SIP/2\\.0/UDP ${local.replace(/\./g, '\\.')};`));
    assert.doesNotMatch(ok + bye, /198\.51\.100\./);
  });

  test('a peer outside local_net sees the external signalling address and port in Contact and Via, the external media address in c= and o=', async () => {
    const { ok, bye } = await callIn(WAN);
    assert.equal(header(bye, 'Max-Forwards'), '42');
    assert.match(header(ok, 'Contact'), new RegExp(`@${EXTERNAL_SIGNALING.replace(/\./g, '\\.')}:${EXTERNAL_PORT}[;>]`));
    assert.deepEqual(sdpLines(ok, 'c='), [`c=IN IP4 ${EXTERNAL_MEDIA}`]);
    assert.match(sdpLines(ok, 'o=')[0] ?? '', new RegExp(` IN IP4 ${EXTERNAL_MEDIA.replace(/\./g, '\\.')}$`));
    assert.match(header(bye, 'Via'), new RegExp(`^SIP/2\\.0/UDP ${EXTERNAL_SIGNALING.replace(/\./g, '\\.')}:${EXTERNAL_PORT};`));
  });

  test('our INVITE to a peer outside local_net names the external addresses (Via, Contact, SDP offer); to a peer inside, the local ones', async () => {
    const wan = await callOut('wan', WAN);
    assert.match(header(wan.invite, 'Via'), new RegExp(`^SIP/2\\.0/UDP ${EXTERNAL_SIGNALING.replace(/\./g, '\\.')}:${EXTERNAL_PORT};`));
    assert.match(header(wan.invite, 'Contact'), new RegExp(`@${EXTERNAL_SIGNALING.replace(/\./g, '\\.')}:${EXTERNAL_PORT}[;>]`));
    assert.deepEqual(sdpLines(wan.invite, 'c='), [`c=IN IP4 ${EXTERNAL_MEDIA}`]);
    assert.match(header(wan.bye, 'Via'), new RegExp(`^SIP/2\\.0/UDP ${EXTERNAL_SIGNALING.replace(/\./g, '\\.')}:${EXTERNAL_PORT};`));
    // global max_forwards: every request we send.
    assert.equal(header(wan.invite, 'Max-Forwards'), '42');
    assert.equal(header(wan.bye, 'Max-Forwards'), '42');

    const lan = await callOut('lan', LAN);
    const local = `127.0.0.1:${peer.server.core.pjsip.port}`.replace(/\./g, '\\.');
    assert.match(header(lan.invite, 'Via'), new RegExp(`^SIP/2\\.0/UDP ${local};`));
    assert.match(header(lan.invite, 'Contact'), new RegExp(`@${local}[;>]`));
    assert.deepEqual(sdpLines(lan.invite, 'c='), ['c=IN IP4 127.0.0.1']);
    assert.doesNotMatch(lan.invite + lan.bye, /198\.51\.100\./);
  });
});

describe('auth nonce_lifetime (SIPp)', { skip: !HAVE_SIPP && 'sipp not installed' }, () => {
  test('credentials on a nonce older than nonce_lifetime get 401 with stale=true; the new challenge then passes', async () => {
    // From 127.0.0.4: neither local_net peer's identify matches, the endpoint is found by username.
    const run = await sipp('register-stale-nonce.xml', [peer.target(), '-s', 'shortnonce', '-au', 'shortnonce', '-ap', 'fleeting'], { cwd: peer.work, address: '127.0.0.4', timeoutMs: 30_000, trace: true }).done;
    assert.equal(run.status, 0, run.output);
    const challenges = tracedMessages(run, /^SIP\/2\.0 401/);
    assert.equal(challenges.length, 2, run.messages);
    assert.doesNotMatch(header(challenges[0]!, 'WWW-Authenticate'), /stale/);
    assert.match(header(challenges[1]!, 'WWW-Authenticate'), /stale=true/);
  });
});

describe('global keep_alive_interval (a raw TCP peer)', { skip: !HAVE_SIPP && 'sipp not installed' }, () => {
  test('a TCP connection that carried SIP receives CRLF CRLF keep-alives every interval', async () => {
    const tcp = peer.server.core.pjsip.listeners().find((listener) => listener.protocol === 'TCP');
    assert.ok(tcp?.port, JSON.stringify(peer.server.core.pjsip.listeners()));
    const socket = net.connect({ host: '127.0.0.1', port: tcp.port, localAddress: '127.0.0.4' });
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    try {
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const local = `127.0.0.4:${socket.localPort}`;
      socket.write(
        [`OPTIONS sip:127.0.0.1:${tcp.port} SIP/2.0`, `Via: SIP/2.0/TCP ${local};branch=z9hG4bK-keepalive-1`, 'Max-Forwards: 70', `From: <sip:probe@${local}>;tag=ka1`, `To: <sip:127.0.0.1:${tcp.port}>`, 'Call-ID: keepalive-probe-1', 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', ''].join('\r\n'),
      );
      // The answer, then (the interval is 1 s) the keep-alive right after it.
      const deadline = Date.now() + 15_000;
      let answerLength: number | undefined;
      for (;;) {
        const text = received.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        if (answerLength === undefined && end >= 0) {
          assert.match(text, /^SIP\/2\.0 \d{3} /);
          const length = Number(/\r\nContent-Length:\s*(\d+)/i.exec(text.slice(0, end))?.[1] ?? '0');
          answerLength = end + 4 + length;
        }
        if (answerLength !== undefined && received.length >= answerLength + 4) break;
        assert.ok(Date.now() < deadline, `no keep-alive after the answer: ${JSON.stringify(text)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(received.subarray(answerLength, answerLength + 4).toString('latin1'), '\r\n\r\n');
    } finally {
      socket.destroy();
    }
  });
});

describe('endpoint allow_unauthenticated_options (SIPp)', { skip: !HAVE_SIPP && 'sipp not installed' }, () => {
  test('an endpoint with an auth has its OPTIONS challenged (401, then 200 with credentials); with allow_unauthenticated_options=yes, 200 at once', async () => {
    const challenged = await sipp('options-challenged.xml', [peer.target(), '-s', 'guarded', '-au', 'guarded', '-ap', 'sentinel'], { cwd: peer.work, address: '127.0.0.4', timeoutMs: 20_000 }).done;
    assert.equal(challenged.status, 0, challenged.output);
    // options.xml's From user is `probe`: the endpoint that allows unauthenticated OPTIONS.
    const allowed = await sipp('options.xml', [peer.target()], { cwd: peer.work, address: '127.0.0.4', timeoutMs: 20_000 }).done;
    assert.equal(allowed.status, 0, allowed.output);
  });
});

describe('domain_alias (SIPp)', { skip: !HAVE_SIPP && 'sipp not installed' }, () => {
  test('carol@127.0.0.1 registers as the endpoint and AOR carol@example.net, 127.0.0.1 being an alias of example.net', async () => {
    const run = await sipp('register-digest.xml', [peer.target(), '-s', 'carol', '-au', 'carol', '-ap', 'aliased'], { cwd: peer.work, address: '127.0.0.4', timeoutMs: 20_000 }).done;
    assert.equal(run.status, 0, run.output);
    const endpoint = (await (await peer.server.ari(`/endpoints/PJSIP/${encodeURIComponent('carol@example.net')}`)).json()) as Json;
    assert.equal(endpoint.state, 'online', JSON.stringify(endpoint));
  });
});
