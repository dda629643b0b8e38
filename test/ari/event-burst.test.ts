// Backpressure on the event WebSocket is measured by what the socket has not taken: a reader that
// keeps up receives every event of a large burst; a reader that never reads is cut off once the
// bytes it has not taken pass the configured budget, before it costs more memory than that.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { test } from 'node:test';
import { AUTH, startTestServer } from '../helpers/server.ts';

/**
 * Sends requests pipelined on a few connections, each connection's requests in one write, so the
 * server parses and handles them in the same turns of its event loop: a real burst.
 */
function pipelinedPosts(url: string, paths: string[], connections: number): Promise<string[]> {
  const { port } = new URL(url);
  const perConnection = Math.ceil(paths.length / connections);
  const batches: Promise<string[]>[] = [];
  for (let c = 0; c < connections; c++) {
    const mine = paths.slice(c * perConnection, (c + 1) * perConnection);
    if (mine.length === 0) continue;
    batches.push(
      new Promise((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => {
          received += chunk.toString('latin1');
          const statuses = received.match(/HTTP\/1\.1 \d{3} /g) ?? [];
          if (statuses.length >= mine.length) {
            socket.destroy();
            resolve(statuses.map((line) => line.slice(9, 12)));
          }
        });
        socket.on('error', reject);
        socket.write(mine.map((path) => `POST /ari${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 0\r\n\r\n`).join(''));
      }),
    );
  }
  return Promise.all(batches).then((lists) => lists.flat());
}

const BURST = Number(process.env.BURST ?? 1000);

test(`${BURST} originates at once into one app: every StasisStart reaches the app`, { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-burst-'));
  const file = join(dir, 'extensions.conf');
  writeFileSync(file, '[burst]\nexten => wait,1,Answer()\n same => n,Wait(120)\n');
  const server = await startTestServer({ ari: { developer_mode: false }, logging: { level: 'info' }, dialplan: { file } });
  try {
    const events = await server.events('app=burst');
    const started = new Set<string>();
    let closed = false;
    let received = 0;
    events.socket.on('close', () => (closed = true));
    const paths = Array.from({ length: BURST }, (_, i) => `/channels/b${i}?endpoint=Local/wait@burst&app=burst`);
    const statuses = await pipelinedPosts(server.url, paths, 4);
    assert.deepEqual(statuses.filter((status) => status !== '200'), []);
    const deadline = Date.now() + 60_000;
    while (started.size < BURST && Date.now() < deadline && !closed) {
      const message = await events.next(Math.max(1, deadline - Date.now())).catch(() => undefined);
      if (!message) break;
      received++;
      if (message.type === 'StasisStart') started.add((message.channel as { id: string }).id);
    }
    assert.equal(closed, false, 'the app socket was closed');
    assert.equal(started.size, BURST);
    process.stdout.write(`# burst: ${started.size}/${BURST} StasisStart delivered, ${received} events in all\n`);
    assert.ok(!server.logLines.some((line) => line.includes('too slow')));
    const channels = (await (await server.ari('/channels')).json()) as unknown[];
    assert.equal(channels.length, BURST * 2, 'no channel was hung up');
    await events.close();
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a consumer that never reads is cut off once it has not taken max_queued_bytes', { timeout: 60_000 }, async () => {
  const budget = 4 * 1024 * 1024;
  const server = await startTestServer({
    ari: { developer_mode: false, websocket: { max_queued_bytes: budget } },
    logging: { level: 'info' },
  });
  try {
    const events = await server.events('app=sleeper');
    (events.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const closedAt = new Promise<void>((resolve) => events.socket.once('close', () => resolve()));
    const big = 'x'.repeat(500_000);
    let sent = 0;
    for (; sent < 1000; sent++) {
      const response = await server.ari('/events/user/flood?application=sleeper', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ variables: { big } }),
      });
      // Once the server has dropped the socket the application has no connection: 404.
      if (response.status !== 204) break;
    }
    // Kernel socket buffers on loopback hold a few MB at most: the budget, not the 500 MB of 1,000
    // events, bounds what was accepted before the cut.
    assert.ok(sent < 100, `${sent} events of 500 KB were queued before the cut`);
    const line = server.logLines.find((entry) => entry.includes('too slow'));
    assert.ok(line, 'expected a log line about the slow consumer');
    const { queuedBytes } = JSON.parse(line) as { queuedBytes: number };
    assert.ok(queuedBytes >= budget && queuedBytes < budget + 600_000, `cut at ${queuedBytes} bytes`);
    (events.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    await closedAt;
  } finally {
    await server.stop();
  }
});
