// One endpoint cannot take every RTP port (issue 21, item 18): every unauthenticated caller shares
// the `anonymous` endpoint, and its live calls are capped by sip.max_calls_per_endpoint — the INVITE
// past the cap gets 486 Busy Here and takes no RTP port, with one log line.
import assert from 'node:assert/strict';
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
  socket.send(rawInviteText({ serverPort: server.core.pjsip.port!, localPort: socket.address().port, user: 'hold', fromUser: 'stranger', callId }), server.core.pjsip.port!, '127.0.0.1');
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
