// Patchbay on a SIP trunk, against SIPp playing the provider (issue 19 items 1, 3, 4, 7 and the trunk
// scenario). Signalling is SIPp's (scenarios in test/sip/scenarios/trunk-*.xml and others); the media
// of every SIPp party is a socket of the test (RtpToneEnd, whose port the scenario's SDP names), which
// sends a tone and checks by frequency what reaches it, and when.
//
// - The provider (SIPp on 127.0.0.19, behind the trunk's outbound_proxy) challenges the REGISTER and
//   the INVITE (401, MD5): Patchbay registers, then a phone's call through Dial(PJSIP/…@provider)
//   is retried with credentials, carries the caller's id (From, P-Asserted-Identity, Remote-Party-ID
//   on from_domain) and the global user_agent, gets 183 early media the phone hears before the 200,
//   and audio both ways after it. The provider's own call in is identified by its address and takes
//   its caller id from P-Asserted-Identity (trust_id_inbound); audio both ways.
// - A 407 with SHA-256 is answered once; refused again, the call ends (no third INVITE).
// - Two forks in early media: the answering fork's SDP wins.
// - A busy callee's 486 reaches the caller as 486 through Dial() and Hangup().
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { dominantTone, RtpToneEnd } from '../helpers/rtp-tone.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
/** The provider's address: its own loopback address, so identify by IP finds only it. */
const PROVIDER_IP = '127.0.0.19';
const randomPort = (): number => 20000 + Math.floor(Math.random() * 20000);
const PROVIDER_PORT = randomPort();
const FORK_PORT = randomPort();
const STRICT_PORT = randomPort();
const BUSY_PORT = randomPort();

interface SippRun {
  readonly status: number | null;
  readonly output: string;
}

let work: string;
let server: TestServer;
let events: EventSocket;
let provider: { done: Promise<SippRun>; kill: () => void } | undefined;
const providerMedia = new RtpToneEnd();

function sipp(scenario: string, args: string[], options: { ip?: string; port?: number; timeoutMs?: number; calls?: number } = {}): { done: Promise<SippRun>; kill: () => void } {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const child = spawn(
    'sipp',
    ['-sf', join(SCENARIOS, scenario), '-i', options.ip ?? '127.0.0.1', '-p', String(options.port ?? randomPort()), '-m', String(options.calls ?? 1), '-nostdin', '-timeout', `${Math.round(timeoutMs / 1000)}s`, '-timeout_error', ...args],
    { cwd: work },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const done = new Promise<SippRun>((resolve) => child.on('exit', (status) => resolve({ status, output: output + errorLog() })));
  return { done, kill: () => child.kill('SIGKILL') };
}

/** SIPp's error logs in the working directory (written with -trace_err), for failure messages. */
function errorLog(): string {
  return readdirSync(work)
    .filter((name) => name.endsWith('_errors.log'))
    .map((name) => readFileSync(join(work, name), 'utf8').slice(-1500))
    .join('\n');
}

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

/**
 * The port a scenario wrote to `name` in the working directory (Patchbay's RTP port of a call); waited
 * for generously, as on a loaded machine the challenged INVITE's retry can take more than 10 s.
 */
async function portFile(name: string, timeoutMs = 30_000): Promise<number> {
  const file = join(work, name);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(file)) {
      const port = Number(readFileSync(file, 'utf8').trim());
      if (port > 0) {
        rmSync(file);
        return port;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no ${name} written by SIPp`);
}

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function assertTone(samples: Int16Array, frequency: number, what: string, minimumSeconds = 0.5): void {
  const tone = dominantTone(samples, frequency);
  assert.ok(tone.loudSamples >= minimumSeconds * 8000, `${what}: at least ${minimumSeconds} s of audio (${tone.loudSamples} loud samples of ${samples.length})`);
  assert.ok(Math.abs(tone.frequency - frequency) < frequency * 0.03, `${what}: the tone is ${tone.frequency.toFixed(1)} Hz, not ${frequency} Hz`);
  assert.ok(tone.amplitude > 2000, `${what}: amplitude ${tone.amplitude.toFixed(0)} at ${frequency} Hz`);
}

const post = (path: string, method = 'POST'): Promise<Response> => server.ari(path, { method });

before(async () => {
  if (!HAVE_SIPP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-trunk-'));
  await providerMedia.open();
  // The provider runs before Patchbay starts, so the first REGISTER finds it.
  provider = sipp('trunk-provider.xml', ['-set', 'mport', String(providerMedia.port), '-trace_err'], { ip: PROVIDER_IP, port: PROVIDER_PORT, timeoutMs: 170_000, calls: 2 });
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(
    dialplanFile,
    [
      '[from-phone]',
      'exten => _0X.,1,Dial(PJSIP/${EXTEN}@provider,20)',
      ' same => n,Hangup()',
      'exten => 300,1,Dial(PJSIP/busy,10)',
      ' same => n,Hangup()',
      '[from-provider]',
      'exten => 5551234,1,Stasis(trunk-app)',
      '',
    ].join('\n'),
  );
  const proxy = `sip:${PROVIDER_IP}:${PROVIDER_PORT};lr`;
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        global: { global: { user_agent: 'PatchbayTrunkTest' } },
        endpoint: {
          phone: { context: 'from-phone', allow: 'ulaw', callerid: '"Front Desk" <1001>' },
          provider: {
            context: 'from-provider',
            allow: 'ulaw',
            aors: 'provider',
            outbound_auth: 'provider-auth',
            outbound_proxy: proxy,
            from_domain: 'provider.example',
            send_pai: 'yes',
            send_rpid: 'yes',
            trust_id_inbound: 'yes',
          },
          forker: { context: 'from-provider', allow: 'ulaw', aors: 'forker' },
          strict: { context: 'from-provider', allow: 'ulaw', aors: 'strict', outbound_auth: 'provider-auth' },
          busy: { context: 'from-provider', allow: 'ulaw', aors: 'busy' },
        },
        auth: { 'provider-auth': { auth_type: 'userpass', username: 'trunkuser', password: 'trunkpass' } },
        aor: {
          provider: { contact: 'sip:provider.example' },
          forker: { contact: `sip:127.0.0.1:${FORK_PORT}` },
          strict: { contact: `sip:127.0.0.1:${STRICT_PORT}` },
          busy: { contact: `sip:127.0.0.1:${BUSY_PORT}` },
        },
        identify: { provider: { endpoint: 'provider', match: PROVIDER_IP } },
        registration: {
          provider: {
            server_uri: 'sip:provider.example',
            client_uri: 'sip:trunkuser@provider.example',
            contact_user: 'trunkuser',
            outbound_auth: 'provider-auth',
            outbound_proxy: proxy,
            expiration: 3600,
            max_random_initial_delay: 0,
          },
        },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  events = await server.events('app=trunk-app&subscribeAll=true');
});

after(async () => {
  if (!HAVE_SIPP) return;
  provider?.kill();
  providerMedia.close();
  // TRUNK_LOG=<file> keeps the server's log lines (with SIP debug) for a failing run.
  if (process.env.TRUNK_LOG) writeFileSync(process.env.TRUNK_LOG, server.logLines.join(''));
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('a SIP trunk against SIPp as the provider', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('registration to the provider: the 401 is answered, the registration is accepted', { timeout: 30_000 }, async () => {
    await waitFor('the registration', () => server.core.pjsip.registrations().some((registration) => registration.status === 'Registered'), 15_000);
  });

  test('a phone calls out through the trunk: INVITE challenged and retried, caller id on the wire, 183 early media heard before the 200, audio both ways', { timeout: 90_000 }, async () => {
    const callerMedia = await new RtpToneEnd().open();
    try {
      const caller = sipp('trunk-caller.xml', [target(), '-s', '0155512345', '-set', 'caller', 'phone', '-set', 'mport', String(callerMedia.port), '-d', '4000', '-trace_err']);
      // The provider's media sends 1 kHz as soon as it knows where (from the challenged INVITE's retry).
      providerMedia.startTone(1000, await portFile('provider-rtp-port'));
      const calledAt = Date.now();
      callerMedia.startTone(440, await portFile('caller-rtp-port'));
      const answered = await nextEvent((e) => e.type === 'Dial' && e.dialstatus === 'ANSWER' && String(e.peer?.name).startsWith('PJSIP/provider-'), 15_000);
      const answeredAt = Date.now();
      assert.equal(answered.peer.connected.number, '1001', 'the callee channel is connected to the caller id');
      const callerRun = await caller.done;
      assert.equal(callerRun.status, 0, callerRun.output);
      providerMedia.stop();
      // Early media: the provider's tone reached the phone while the call was in 183, before its 200.
      assertTone(callerMedia.samples(calledAt, answeredAt - 100), 1000, 'early media at the phone', 1);
      // After the answer both ways.
      assertTone(callerMedia.samples(answeredAt + 300), 1000, 'the provider heard by the phone');
      assertTone(providerMedia.samples(answeredAt + 300), 440, 'the phone heard by the provider');
    } finally {
      callerMedia.close();
    }
  });

  test('the provider calls in: identified by its address, caller id from P-Asserted-Identity (trust_id_inbound), audio both ways', { timeout: 60_000 }, async () => {
    const inboundMedia = await new RtpToneEnd().open();
    try {
      const run = sipp('trunk-inbound.xml', [target(), '-set', 'mport', String(inboundMedia.port), '-d', '3000', '-trace_err'], { ip: PROVIDER_IP });
      const start = await nextEvent((e) => e.type === 'StasisStart' && e.application === 'trunk-app');
      const channel = start.channel as Json;
      assert.match(channel.name, /^PJSIP\/provider-/);
      assert.equal(channel.caller.number, '+15550001');
      assert.equal(channel.caller.name, 'Caller');
      assert.equal((await post(`/channels/${channel.id}/answer`)).status, 204);
      inboundMedia.startTone(1000, await portFile('inbound-rtp-port'));
      const answeredAt = Date.now();
      assert.equal((await post(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
      assert.equal((await post(`/channels/${channel.id}/record?name=trunk-inbound&format=wav`)).status, 201);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === channel.id, 15_000);
      const result = await run.done;
      assert.equal(result.status, 0, result.output);
      inboundMedia.stop();
      assertTone(inboundMedia.samples(answeredAt + 300), 440, 'Patchbay heard by the provider');
      await waitFor('the recording', () => findFile(join(server.dataDir, 'recordings'), 'trunk-inbound.wav') !== undefined);
      assertTone(wavSamples(findFile(join(server.dataDir, 'recordings'), 'trunk-inbound.wav')!), 1000, 'the provider heard by Patchbay');
    } finally {
      inboundMedia.close();
    }
  });

  test('a 407 with SHA-256 is answered once; refused again, the call ends without a third INVITE (cause 21)', { timeout: 30_000 }, async () => {
    const proxy = sipp('invite-proxy-challenge-refused.xml', ['-trace_err'], { port: STRICT_PORT });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const response = await post('/channels?endpoint=PJSIP/777@strict&app=trunk-app');
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    const destroyed = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === channel.id);
    assert.equal(destroyed.cause, 21);
    const result = await proxy.done;
    assert.equal(result.status, 0, result.output);
  });

  test('two forks send 183 with SDP, the second answers: media follows the answering fork', { timeout: 30_000 }, async () => {
    const forkA = await new RtpToneEnd().open();
    const forkB = await new RtpToneEnd().open();
    try {
      const callee = sipp('fork-183-200.xml', ['-set', 'porta', String(forkA.port), '-set', 'portb', String(forkB.port), '-trace_err'], { port: FORK_PORT });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const response = await post('/channels?endpoint=PJSIP/0155500000@forker&app=trunk-app');
      const channel = (await response.json()) as Json;
      assert.equal(response.status, 200, JSON.stringify(channel));
      await nextEvent((e) => e.type === 'StasisStart' && e.channel?.id === channel.id);
      const answeredAt = Date.now();
      assert.equal((await post(`/channels/${channel.id}/play?media=${encodeURIComponent('tone:440')}`)).status, 201);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await post(`/channels/${channel.id}`, 'DELETE')).status, 204);
      await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === channel.id);
      const result = await callee.done;
      assert.equal(result.status, 0, result.output);
      assertTone(forkB.samples(answeredAt), 440, 'the answering fork');
      assert.equal(forkA.samples(answeredAt + 200).length, 0, 'nothing goes to the fork that did not answer');
    } finally {
      forkA.close();
      forkB.close();
    }
  });

  test('the callee is busy: its 486 reaches the caller as 486 through Dial() and Hangup(), not 603', { timeout: 30_000 }, async () => {
    const busy = sipp('busy-incoming.xml', [], { port: BUSY_PORT });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const caller = sipp('call-expect-busy.xml', [target(), '-s', '300', '-set', 'caller', 'phone', '-trace_err']);
    const [callerRun, busyRun] = await Promise.all([caller.done, busy.done]);
    assert.equal(callerRun.status, 0, callerRun.output);
    assert.equal(busyRun.status, 0, busyRun.output);
  });
});


