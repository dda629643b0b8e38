// One endpoint cannot take every RTP port (issue 21, item 18): every unauthenticated caller shares
// the `anonymous` endpoint, and its live calls are capped by sip.max_calls_per_endpoint — the INVITE
// past the cap gets 486 Busy Here and takes no RTP port, with one log line.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let dir: string;
let server: TestServer;
const socket = dgram.createSocket('udp4');
const finals = new Map<string, number>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-call-limits-'));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, '[default]\nexten => hold,1,Wait(30)\n');
  server = await startTestServer({
    dialplan: { file: dialplan },
    sip: { max_calls_per_endpoint: 2 },
    config_objects: { res_pjsip: { endpoint: { anonymous: { context: 'default', allow: 'ulaw' } } } },
  });
  socket.on('message', (data) => {
    const text = data.toString('latin1');
    const status = /^SIP\/2\.0 (\d{3})/.exec(text)?.[1];
    const callId = /^Call-ID: (.+)$/im.exec(text)?.[1]?.trim();
    if (status && callId && Number(status) >= 180) finals.set(callId, Number(status));
    if (status && callId && Number(status) === 100 && !finals.has(callId)) finals.set(callId, 100);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
});

after(async () => {
  socket.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function invite(callId: string): void {
  const port = server.core.pjsip.port!;
  const local = socket.address().port;
  const sdp = ['v=0', 'o=x 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
  const text = [
    `INVITE sip:hold@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
    'Max-Forwards: 70',
    `From: <sip:stranger@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`,
    `To: <sip:hold@127.0.0.1:${port}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:stranger@127.0.0.1:${local}>`,
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(sdp)}`,
    '',
    sdp,
  ].join('\r\n');
  socket.send(text, port, '127.0.0.1');
}

async function until(condition: () => boolean, what: string): Promise<void> {
  // Generous: on a loaded machine the INVITEs may take seconds to become channels.
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the INVITE past max_calls_per_endpoint gets 486 and no channel', async () => {
  invite('limit-1');
  invite('limit-2');
  await until(() => server.core.channels.list().length === 2, 'two channels');
  invite('limit-3');
  await until(() => finals.get('limit-3') !== undefined && finals.get('limit-3') !== 100, 'an answer to the third INVITE');
  assert.equal(finals.get('limit-3'), 486);
  assert.equal(server.core.channels.list().length, 2);
  assert.ok(server.logLines.some((line) => line.includes('the endpoint has as many calls as it may')));
});
