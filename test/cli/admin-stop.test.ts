// `patchbay stop --gracefully` as a real process against a server process it finds through its
// pidfile (see admin-process.test.ts for why these are files of their own).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { readPidFile } from '../../src/cli/pidfile.ts';
import { ADMIN_MAIN, removeTempDirs, serverAsProcess, spawnNode } from './admin-processes.ts';

after(() => removeTempDirs());

describe('admin CLI as a process', () => {
  test('stop --gracefully waits for the last channel, then the server process exits', async () => {
    const { dir, port, serverEnv, serverProcess, url, auth } = await serverAsProcess();
    try {
      // The server wrote its pidfile once it listened.
      assert.equal(readPidFile(join(dir, 'data')), serverProcess.child.pid);
      const call = (await (await fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } })).json()) as { id: string };
      const stopper = spawnNode([ADMIN_MAIN, 'stop', '--gracefully'], serverEnv, dir);
      // The admin command is a process of its own: on a loaded machine it may take seconds to start,
      // signal and poll, so wait for the server to say it drains and for the command to report what
      // it waits for, rather than for fixed times.
      let stopperOut = '';
      stopper.child.stdout!.on('data', (d) => (stopperOut += String(d)));
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 503 && /waiting for \d+ channel/.test(stopperOut)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(stopperOut, /waiting for [1-9]\d* channel/, 'the command reports the call it waits for');
      assert.equal(serverProcess.child.exitCode, null, 'still running while a call is up');
      // Draining: a new call is refused, the health check tells load balancers, the call goes on.
      const refused = await fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } });
      assert.equal(refused.status, 503);
      assert.match(((await refused.json()) as { message: string }).message, /shutting down gracefully/);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { status: string }).status, 'draining');
      assert.equal((await fetch(`${url}/channels/${call.id}`, { headers: { authorization: auth } })).status, 200);
      await fetch(`${url}/channels/${call.id}`, { method: 'DELETE', headers: { authorization: auth } });
      const stopped = await stopper.done;
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, /waiting for \d+ channel/);
      assert.match(stopped.stdout, /stopped \(pid \d+\)/);
      const exit = await serverProcess.done;
      assert.equal(exit.code, 0);
    } finally {
      if (serverProcess.child.exitCode === null) serverProcess.child.kill('SIGKILL');
    }
  });

  test('stop --gracefully that times out leaves the server running and taking calls again', async () => {
    const { dir, port, serverEnv, serverProcess, url, auth } = await serverAsProcess();
    try {
      const originate = () => fetch(`${url}/channels?endpoint=Local/echo@default&extension=echo&context=default`, { method: 'POST', headers: { authorization: auth } });
      const call = (await (await originate()).json()) as { id: string };
      const stopper = await spawnNode([ADMIN_MAIN, 'stop', '--gracefully', '--timeout', '1'], serverEnv, dir).done;
      assert.equal(stopper.code, 1);
      assert.match(stopper.stderr, /still up after 1 s; the server was not stopped and takes calls again/);
      assert.equal(serverProcess.child.exitCode, null);
      let answered = 0;
      // The server takes calls again once SIGUSR2 is handled: soon, but not at a fixed time under load.
      for (const deadline = Date.now() + 20_000; Date.now() < deadline && answered !== 200; ) {
        const again = await originate();
        answered = again.status;
        if (answered === 200) await fetch(`${url}/channels/${((await again.json()) as { id: string }).id}`, { method: 'DELETE', headers: { authorization: auth } });
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(answered, 200, 'new calls are taken again');
      assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
      await fetch(`${url}/channels/${call.id}`, { method: 'DELETE', headers: { authorization: auth } });
    } finally {
      if (serverProcess.child.exitCode === null) serverProcess.child.kill('SIGKILL');
    }
  });
});
