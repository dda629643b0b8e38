// The real entry point as a child process, recording a channel, then SIGTERM or SIGINT: the process
// exits 0 and the WAV file it leaves has a header that describes all of its data. Also through
// `npm start` (the README's command), signalled the way a service manager or `docker stop` does:
// only npm's own process gets the signal, and nothing may be left running.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { parseWav, sleep } from '../ari/recordings-helpers.ts';
import { freePort } from '../helpers/ports.ts';

/** Resolves 'timeout' after ms without keeping the process alive once the race is decided (the file must exit by itself). */
const timeoutAfter = (ms: number): Promise<'timeout'> => new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
// The compiled build `npm ci` makes (prepare script); test/process/entry-point.test.ts builds it when absent.
const DIST_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const TSX = import.meta.resolve('tsx');
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

const cwd = mkdtempSync(join(tmpdir(), 'patchbay-sigterm-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

function portIsClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

const CASES = [
  { launcher: 'node', signal: 'SIGTERM' },
  { launcher: 'node dist', signal: 'SIGTERM' },
  { launcher: 'npm start', signal: 'SIGTERM' },
  { launcher: 'npm start', signal: 'SIGINT' },
] as const;

for (const { launcher, signal } of CASES) test(`${signal} to ${launcher} in the middle of a recording leaves a finalised WAV file`, async () => {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_HTTP_PORT: String(port), PATCHBAY_DATA_DIR: join(cwd, 'data') };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_BIND']) delete env[name];
  const child =
    launcher === 'node'
      ? spawn(process.execPath, ['--import', TSX, MAIN], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : launcher === 'node dist'
        ? spawn(process.execPath, [DIST_MAIN], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : // Its own process group, so that a regression leaving processes behind is cleaned up below.
        spawn('npm', ['start', '--silent'], { cwd: REPOSITORY, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  try {
    const base = `http://127.0.0.1:${port}/ari`;
    const ari = (path: string, method = 'GET'): Promise<Response> => fetch(`${base}${path}`, { method, headers: { authorization: AUTH } });
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        if ((await ari('/system/ping')).status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
      await sleep(100);
    }
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ari/events?app=sig-app`, { headers: { authorization: AUTH } });
    const messages: Record<string, any>[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const waitFor = async (type: string): Promise<void> => {
      const until = Date.now() + 5000;
      while (!messages.some((message) => message.type === type)) {
        if (Date.now() > until) throw new Error(`no ${type}:\n${output}`);
        await sleep(20);
      }
    };
    assert.equal((await ari('/channels/sig-1?endpoint=Local/answer@default&app=sig-app&otherChannelId=sig-2', 'POST')).status, 200);
    await waitFor('StasisStart');
    assert.equal((await ari('/channels/sig-1/record?name=shutdown/sig&format=wav', 'POST')).status, 201);
    await waitFor('RecordingStarted');
    await sleep(700);
    child.kill(signal);
    const code = await Promise.race([exited, timeoutAfter(8000)]);
    // npm reports a child ended by SIGINT as a failure of the script; what matters is that it ended.
    if (!(launcher === 'npm start' && signal === 'SIGINT')) assert.equal(code, 0, output);
    else assert.notEqual(code, 'timeout', output);
    socket.terminate();
    assert.ok(await portIsClosed(port), `the server still listens after ${signal} to ${launcher}`);
    const wav = parseWav(readFileSync(join(cwd, 'data', 'recordings', 'shutdown', 'sig.wav')));
    assert.equal(wav.rate, 8000);
    const ms = (wav.dataSize / 16000) * 1000;
    assert.ok(ms >= 600 && ms <= 1500, `the header describes the recording (${ms} ms)`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (launcher === 'npm start' && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone: nothing was left behind
      }
    }
    rmSync(join(cwd, 'data', 'recordings'), { recursive: true, force: true });
  }
});
