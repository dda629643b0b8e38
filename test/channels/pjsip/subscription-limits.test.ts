// Subscriptions are bounded and hostile SUBSCRIBEs are answered, never crash (a raw UDP client,
// since no SIP tool sends 201 subscriptions at once): one endpoint gets MAX_SUBSCRIPTIONS_PER_ENDPOINT
// subscriptions, the next SUBSCRIBE 503 with Retry-After; an Expires beyond the maximum is cut to
// it; an oversized Event is 489.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MAX_SUBSCRIPTION_EXPIRES, MAX_SUBSCRIPTIONS_PER_ENDPOINT } from '../../../src/channels/pjsip/subscriptions/server.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let dir: string;
let server: TestServer;
const socket = dgram.createSocket('udp4');
/** Final responses to our SUBSCRIBEs by Call-ID: the status line and the whole text. */
const answers = new Map<string, string>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-subscription-limits-'));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, '[default]\nexten => 100,hint,Custom:desk\n');
  server = await startTestServer({
    dialplan: { file: dialplan },
    config_objects: { res_pjsip: { endpoint: { flood: { context: 'default', allow: 'ulaw' } } } },
  });
  socket.on('message', (data, from) => {
    const text = data.toString('latin1');
    const callId = /^Call-ID:\s*(.+)$/im.exec(text)?.[1]?.trim() ?? '';
    if (/^NOTIFY /.test(text)) {
      // Every NOTIFY is answered 200, so that the subscriptions stay.
      const keep = text.split('\r\n').filter((line) => /^(Via|From|To|Call-ID|CSeq):/i.test(line));
      socket.send(['SIP/2.0 200 OK', ...keep, 'Content-Length: 0', '', ''].join('\r\n'), from.port, from.address);
      return;
    }
    const status = /^SIP\/2\.0 (\d{3})/.exec(text)?.[1];
    if (status && Number(status) >= 200) answers.set(callId, text);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
});

after(async () => {
  socket.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function subscribe(callId: string, extra: string[] = []): void {
  const port = server.core.pjsip.port;
  const local = socket.address().port;
  const text = [
    `SUBSCRIBE sip:100@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
    'Max-Forwards: 70',
    `From: <sip:flood@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`,
    `To: <sip:100@127.0.0.1:${port}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 SUBSCRIBE',
    `Contact: <sip:flood@127.0.0.1:${local}>`,
    ...(extra.some((line) => line.startsWith('Event:')) ? [] : ['Event: dialog']),
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  socket.send(text, port, '127.0.0.1');
}

async function answerTo(callId: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (!answers.has(callId)) {
    if (Date.now() > deadline) throw new Error(`no answer to ${callId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return answers.get(callId)!;
}

test('an Expires beyond the maximum is cut to it; an oversized Event is 489', { timeout: 60_000 }, async () => {
  subscribe('long', ['Expires: 4294967295']);
  assert.match(await answerTo('long'), new RegExp(`^Expires:\\s*${MAX_SUBSCRIPTION_EXPIRES}\\s*$`, 'im'));
  subscribe('huge-event', [`Event: ${'x'.repeat(4000)}`]);
  assert.match(await answerTo('huge-event'), /^SIP\/2\.0 489 /);
});

test(`one endpoint holds at most ${MAX_SUBSCRIPTIONS_PER_ENDPOINT} subscriptions: the next SUBSCRIBE gets 503 with Retry-After`, { timeout: 120_000 }, async () => {
  const already = server.core.pjsip.stats().subscriptions;
  const wanted = MAX_SUBSCRIPTIONS_PER_ENDPOINT - already;
  for (let index = 0; index < wanted; index++) {
    subscribe(`sub-${index}`, ['Expires: 600']);
    // A few at a time, so that the phone's side (this socket) keeps up on a loaded machine.
    if (index % 20 === 19) await answerTo(`sub-${index}`);
  }
  for (let index = 0; index < wanted; index++) assert.match(await answerTo(`sub-${index}`), /^SIP\/2\.0 200 /, `sub-${index}`);
  assert.equal(server.core.pjsip.stats().subscriptions, MAX_SUBSCRIPTIONS_PER_ENDPOINT);
  subscribe('one-too-many', ['Expires: 600']);
  const refused = await answerTo('one-too-many');
  assert.match(refused, /^SIP\/2\.0 503 /);
  assert.match(refused, /^Retry-After:\s*60\s*$/im);
  assert.equal(server.core.pjsip.stats().subscriptions, MAX_SUBSCRIPTIONS_PER_ENDPOINT);
});
