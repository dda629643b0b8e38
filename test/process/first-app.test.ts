// README's "Your first app": examples/first-app.js against a real server, called as the README
// says; what it prints names where ARI serves the recording (not a directory it cannot know).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

const FIRST_APP = fileURLToPath(new URL('../../examples/first-app.js', import.meta.url));

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

test('first-app answers, plays, records and prints the URL of the stored recording', async () => {
  const app = spawn(process.execPath, [FIRST_APP], { env: { ...process.env, ARI_URL: server.url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  app.stdout.on('data', (d) => (output += String(d)));
  app.stderr.on('data', (d) => (output += String(d)));
  const waitFor = async (text: string, ms: number): Promise<void> => {
    for (const deadline = Date.now() + ms; Date.now() < deadline && !output.includes(text); ) await new Promise((r) => setTimeout(r, 50));
    assert.ok(output.includes(text), `"${text}" in:\n${output}`);
  };
  try {
    await waitFor('first-app is waiting for calls to test-app', 30_000);
    const call = await server.ari('/channels?endpoint=Local/answer@default&extension=1000&context=default', { method: 'POST' });
    assert.equal(call.status, 200);
    await waitFor('hung up', 30_000);
    const match = /^recorded (\S+)\.wav: (\S+)$/m.exec(output);
    assert.ok(match, output);
    assert.equal(match[2], `${server.url}/ari/recordings/stored/${match[1]}/file`);
    const file = await fetch(match[2]!, { headers: { authorization: AUTH } });
    assert.equal(file.status, 200);
    assert.ok((await file.arrayBuffer()).byteLength > 44, 'the recording has audio');
  } finally {
    app.kill('SIGTERM');
  }
});
