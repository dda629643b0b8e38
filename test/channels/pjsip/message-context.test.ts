// message_context: a MESSAGE from SIPp (a known endpoint) raises TextMessageReceived, then runs
// the endpoint's message_context at the request-URI's user, where MESSAGE() and MESSAGE_DATA()
// read it and MessageSend() answers: the reply MESSAGE reaches the endpoint's contact (a UDP
// socket here), and MESSAGE_SEND_STATUS is observable through ARI's global variables.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createResponse, SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';
import { waitUntil } from '../../sip/helpers.ts';

const SCENARIOS = fileURLToPath(new URL('../../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;

const DIALPLAN = `[texts]
exten => echo,1,Set(MESSAGE(body)=echo: \${MESSAGE(body)} (\${MESSAGE_DATA(X-Priority)}))
 same => n,Set(MESSAGE_DATA(X-Reply)=yes)
 same => n,Set(GLOBAL(LAST_CHANNEL)=\${CHANNEL})
 same => n,MessageSend(pjsip:texter,"Echo" <sip:echo@patchbay>)
 same => n,Set(GLOBAL(LAST_STATUS)=\${MESSAGE_SEND_STATUS})
 same => n,Set(GLOBAL(LAST_FROM)=\${MESSAGE(from)})
 same => n,Set(GLOBAL(LAST_TO)=\${MESSAGE(to)})
exten => toapp,1,Set(MESSAGE(body)=for the app: \${MESSAGE(body)})
 same => n,MessageSend(pjsip:watcher,sip:bot@patchbay)
exten => bad,1,MessageSend(nosuchtech:someone)
 same => n,Set(GLOBAL(BAD_PROTOCOL)=\${MESSAGE_SEND_STATUS})
 same => n,MessageSend(pjsip)
 same => n,Set(GLOBAL(BAD_URI)=\${MESSAGE_SEND_STATUS})
`;

describe('message_context runs the dialplan for out-of-call MESSAGEs', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  let server: TestServer;
  let work: string;
  let events: EventSocket;
  const phone = dgram.createSocket('udp4');
  const received: SipRequest[] = [];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-msgctx-'));
    writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
    phone.on('message', (data, remote) => {
      const parsed = parseMessage(data);
      if (!parsed.ok || !(parsed.message instanceof SipRequest)) return;
      received.push(parsed.message);
      phone.send(createResponse(parsed.message, 200, 'OK', { toTag: 'phone' }).serialize(), remote.port, remote.address);
    });
    await new Promise<void>((resolve) => phone.bind(0, '127.0.0.1', () => resolve()));
    server = await startTestServer({
      dialplan: { file: join(work, 'extensions.conf') },
      config_objects: {
        res_pjsip: {
          endpoint: {
            texter: { context: 'default', message_context: 'texts', allow: 'ulaw', aors: 'texter' },
            // No contact: messages to it reach the applications subscribed to it.
            watcher: { context: 'default', allow: 'ulaw' },
          },
          aor: { texter: { contact: `sip:texter@127.0.0.1:${phone.address().port}` } },
        },
      },
    } as never);
    events = await server.events('app=msg-watch');
    assert.equal((await server.ari('/applications/msg-watch/subscription?eventSource=endpoint:PJSIP/texter', { method: 'POST' })).status, 200);
  });

  after(async () => {
    await events.close();
    await server.stop();
    phone.close();
    rmSync(work, { recursive: true, force: true });
  });

  function sendFromSipp(service: string): Promise<{ code: number | null; output: string }> {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn('sipp', [
      '-sf', join(SCENARIOS, 'message-send.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin',
      '-timeout', '15s', '-timeout_error', '-s', service, '-set', 'caller', 'texter', `127.0.0.1:${server.core.pjsip.port}`,
    ]);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output: output.slice(-2000) })));
  }

  async function globalVar(name: string): Promise<string> {
    const response = await server.ari(`/asterisk/variable?variable=${name}`);
    return response.status === 200 ? ((await response.json()) as { value: string }).value : '';
  }

  test('MESSAGE → TextMessageReceived, then MessageSend answers the phone with the body the dialplan made', async () => {
    const run = await sendFromSipp('echo');
    assert.equal(run.code, 0, run.output);
    const event = (await events.nextOfType('TextMessageReceived', 5000)) as Record<string, any>;
    assert.equal(event.message.body.trim(), 'hello from sipp');
    assert.equal(event.endpoint.resource, 'texter');

    await waitUntil(() => received.some((request) => request.method === 'MESSAGE'), 5000, 'the reply MESSAGE');
    const reply = received.find((request) => request.method === 'MESSAGE')!;
    assert.match(reply.body.toString('utf8'), /^echo: hello from sipp\s*\(urgent\)$/);
    assert.match(reply.get('from') ?? '', /<sip:echo@/);
    assert.equal(reply.get('x-reply'), 'yes');
    assert.equal(reply.get('x-priority'), 'urgent', 'the received headers go back out with the message');
    assert.equal(await globalVar('LAST_STATUS'), 'SUCCESS');
    assert.match(await globalVar('LAST_FROM'), /sip:texter@127\.0\.0\.1/);
    assert.equal(await globalVar('LAST_TO'), 'pjsip:echo');
    assert.equal(await globalVar('LAST_CHANNEL'), 'Message/ast_msg_queue', 'named as Asterisk names every message channel');
  });

  test('MessageSend to an endpoint without a contact reaches the ARI application subscribed to it', async () => {
    assert.equal((await server.ari('/applications/msg-watch/subscription?eventSource=endpoint:PJSIP/watcher', { method: 'POST' })).status, 200);
    const run = await sendFromSipp('toapp');
    assert.equal(run.code, 0, run.output);
    for (;;) {
      const event = (await events.nextOfType('TextMessageReceived', 5000)) as Record<string, any>;
      if (event.endpoint.resource !== 'watcher') continue;
      assert.match(event.message.body, /^for the app: hello from sipp/);
      assert.equal(event.message.from, 'sip:bot@patchbay');
      assert.equal(event.message.to, 'pjsip:watcher');
      assert.equal(event.message.variables['X-Priority'], 'urgent');
      break;
    }
  });

  test('MessageSend to an unknown technology or a malformed destination sets MESSAGE_SEND_STATUS', async () => {
    const run = await sendFromSipp('bad');
    assert.equal(run.code, 0, run.output);
    let protocol = '';
    for (let i = 0; i < 50 && protocol === ''; i++) {
      protocol = await globalVar('BAD_PROTOCOL');
      if (protocol === '') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(protocol, 'INVALID_PROTOCOL', server.logLines.filter((line) => /Executing|dialplan|Message/.test(line)).slice(-10).join(''));
    let uri = '';
    for (let i = 0; i < 50 && uri === ''; i++) {
      uri = await globalVar('BAD_URI');
      if (uri === '') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(uri, 'INVALID_URI');
  });
});
