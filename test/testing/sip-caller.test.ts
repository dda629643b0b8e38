// A virtual caller on a real SIP leg (SIP and RTP over loopback), written with the npm API: the
// callers' Patchbay dials out of its PJSIP endpoint "trunk" to a second Patchbay, where the call
// comes in as endpoint "callers" to 100@apps, the example IVR. Both SIP stacks are Patchbay's.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call } from '../../src/testing/index.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { VOICE_APPS, startExampleApp, stopExampleApp } from './voice-apps-helpers.ts';

let apps: TestServer;
let callers: TestServer;
let ivr: ChildProcess | undefined;
const artifacts = mkdtempSync(join(tmpdir(), 'patchbay-sip-caller-'));

before(async () => {
  apps = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: { callers: { context: 'apps', allow: 'ulaw' } },
        identify: { callers: { endpoint: 'callers', match: '127.0.0.1' } },
      },
    },
    dialplan: { file: `${VOICE_APPS}extensions.conf` },
  } as never);
  callers = await startTestServer({ config_objects: { res_pjsip: { endpoint: { trunk: { context: 'default', allow: 'ulaw' } } } } } as never);
  ivr = await startExampleApp(apps, 'ivr.js');
});

after(async () => {
  await stopExampleApp(ivr);
  await callers?.stop();
  await apps?.stop();
  // Kept only when a failure left something in it.
  if (readdirSync(artifacts).length === 0) rmSync(artifacts, { recursive: true, force: true });
});

test('call() dials a sip: URI from a PJSIP endpoint: the menu heard through µ-law RTP, DTMF as RFC 4733, caller id and headers sent', async () => {
  // The app's side: the header and caller id as the incoming channel got them.
  const watcher = await apps.events('app=watcher&subscribeAll=true');
  const arrived = (async () => {
    for (;;) {
      const event = (await watcher.next(15_000).catch(() => ({ type: 'none' }))) as { type: string; channel?: { id: string; name: string; caller: { number: string } } };
      if (event.type === 'none') return undefined;
      // The incoming call's channel, once it runs the dialplan (StasisStart goes to the IVR alone).
      if (event.type !== 'ChannelDialplan' || !event.channel?.name.startsWith('PJSIP/callers')) continue;
      const header = await apps.ari(`/channels/${event.channel.id}/variable?variable=${encodeURIComponent('PJSIP_HEADER(read,X-Test-Run)')}`);
      return { caller: event.channel.caller.number, header: ((await header.json()) as { value: string }).value };
    }
  })();
  const result = await call({
    ari: { url: callers.url, username: 'asterisk', password: 'asterisk' },
    name: 'sip caller',
    dial: { to: `sip:100@127.0.0.1:${apps.core.pjsip.port}`, sip_endpoint: 'trunk', caller_id: '"SIP Test" <3001>', headers: { 'X-Test-Run': '42' } },
    // Between two servers in this one busy process the RTP leg loses a packet now and then, which
    // the jitter buffer conceals: the prompts are asked for with a lower threshold than on a LAN.
    steps: [{ expect_audio: { prompt: 'dir-welcome', timeout: '5s', threshold: 0.45 } }, { send_dtmf: '1' }, { expect_audio: { prompt: 'hello-world', threshold: 0.45 } }, { expect_hangup: { cause: 16 } }],
    // A failure keeps what the caller heard and its events (flaky under CI load, cause not found
    // yet: after the 1 the call ends with hello-world not heard); the events go into the message.
    artifactsDir: artifacts,
  });
  const transcript = !result.passed && result.transcript && existsSync(result.transcript) ? readFileSync(result.transcript, 'utf8').split('\n').slice(-40).join('\n') : '';
  assert.ok(result.passed, `${result.error}\n${JSON.stringify(result.steps, null, 1)}\nheard: ${result.recording ?? '-'}\n${transcript}`);
  assert.match(result.steps[0]!.detail ?? '', /^score \d\.\d\d, heard from/);
  assert.deepEqual(await arrived, { caller: '3001', header: '42' });
  await watcher.close();
});
