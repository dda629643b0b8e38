// 100 Trying for a new call goes out at once, as chan_pjsip sends it (PJSIP answers an INVITE it
// takes with 100 before anything else), not after the transaction layer's 200 ms: so the 100 comes
// first even when the dialplan rings or answers within those 200 ms. An INVITE refused before it
// is taken (a 401 challenge) gets its final response alone, as from Asterisk.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { rawInviteText } from '../../helpers/sip-inbox.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let dir: string;
let server: TestServer;
const socket = dgram.createSocket('udp4');
/** The statuses answering each Call-ID, in the order they arrived. */
const responses = new Map<string, number[]>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-trying-'));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, ['[default]', 'exten => ring,1,Ringing()', ' same => n,Wait(30)', 'exten => answer,1,Answer()', ' same => n,Wait(30)', 'exten => _12XX,1,Answer()', ''].join('\n'));
  server = await startTestServer({
    dialplan: { file: dialplan },
    config_objects: {
      res_pjsip: {
        endpoint: {
          anonymous: { context: 'default', allow: 'ulaw' },
          strict: { context: 'default', allow: 'ulaw', allow_overlap: 'no' },
          secure: { context: 'default', allow: 'ulaw', auth: 'secure-auth' },
        },
        identify: { 'strict-identify': { endpoint: 'strict', match: '127.0.0.2' } },
        auth: { 'secure-auth': { auth_type: 'userpass', username: 'secure', password: 'not-sent' } },
      },
    },
  } as never);
  socket.on('message', (data) => {
    const text = data.toString('latin1');
    const status = /^SIP\/2\.0 (\d{3})/.exec(text)?.[1];
    const callId = /^Call-ID: (.+)$/im.exec(text)?.[1]?.trim();
    if (!status || !callId) return;
    const list = responses.get(callId) ?? [];
    // Retransmissions of one response are counted once.
    if (list.at(-1) !== Number(status)) list.push(Number(status));
    responses.set(callId, list);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
});

after(async () => {
  socket.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function invite(user: string, callId: string, fromUser = 'stranger'): void {
  socket.send(rawInviteText({ serverPort: server.core.pjsip.port, localPort: socket.address().port, user, fromUser, callId }), server.core.pjsip.port, '127.0.0.1');
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function hangUpAll(): Promise<void> {
  for (const channel of server.core.channels.list()) channel.hangup(16);
  await until(() => server.core.channels.list().length === 0, 'no channel left');
}

test('an INVITE the dialplan rings at once: 100 Trying first, then 180', async () => {
  const callId = `ring-${randomBytes(6).toString('hex')}`;
  invite('ring', callId);
  await until(() => (responses.get(callId)?.length ?? 0) >= 2, 'two responses');
  assert.deepEqual(responses.get(callId)!.slice(0, 2), [100, 180]);
  await hangUpAll();
});

test('an INVITE the dialplan answers at once: 100 Trying first, then 200', async () => {
  const callId = `answer-${randomBytes(6).toString('hex')}`;
  invite('answer', callId);
  await until(() => (responses.get(callId)?.length ?? 0) >= 2, 'two responses');
  assert.deepEqual(responses.get(callId)!.slice(0, 2), [100, 200]);
  await hangUpAll();
});

test('a challenged INVITE gets its 401 alone, no 100 before it', async () => {
  const callId = `challenge-${randomBytes(6).toString('hex')}`;
  invite('ring', callId, 'secure');
  await until(() => (responses.get(callId)?.length ?? 0) >= 1, 'an answer');
  assert.deepEqual(responses.get(callId), [401]);
});

test('an INVITE to an extension the context lacks: 404 alone, no 100 and no channel, as chan_pjsip answers', async () => {
  const callId = `unknown-${randomBytes(6).toString('hex')}`;
  const before = server.core.channels.list().length;
  invite('nowhere', callId);
  await until(() => (responses.get(callId)?.length ?? 0) >= 1, 'an answer');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(responses.get(callId), [404]);
  assert.equal(server.core.channels.list().length, before);
});

test('an INVITE to a number that more digits could match: 484 Address Incomplete (allow_overlap defaults to yes)', async () => {
  const callId = `partial-${randomBytes(6).toString('hex')}`;
  invite('12', callId);
  await until(() => (responses.get(callId)?.length ?? 0) >= 1, 'an answer');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(responses.get(callId), [484]);
});

test('allow_overlap=no: the same incomplete number is 404', async () => {
  const callId = `strict-${randomBytes(6).toString('hex')}`;
  const strict = dgram.createSocket('udp4');
  const statuses: number[] = [];
  strict.on('message', (data) => {
    const status = Number(/^SIP\/2\.0 (\d{3})/.exec(data.toString('latin1'))?.[1]);
    if (status && statuses.at(-1) !== status) statuses.push(status);
  });
  await new Promise<void>((resolve) => strict.bind(0, '127.0.0.2', () => resolve()));
  try {
    const port = server.core.pjsip.port;
    const local = strict.address().port;
    const text = [
      `INVITE sip:12@127.0.0.1:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.2:${local};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
      'Max-Forwards: 70',
      `From: <sip:someone@127.0.0.2>;tag=${randomBytes(4).toString('hex')}`,
      `To: <sip:12@127.0.0.1:${port}>`,
      `Call-ID: ${callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:someone@127.0.0.2:${local}>`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    strict.send(text, port, '127.0.0.1');
    await until(() => statuses.length >= 1, 'an answer');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(statuses, [404]);
  } finally {
    strict.close();
  }
});
