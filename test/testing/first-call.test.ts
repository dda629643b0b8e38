// The first calls of a suite on a busy server. A Node.js server takes in one new TCP connection per
// turn of its event loop (libuv accepts one per poll), so at load (a turn of 100-200 ms) a burst of
// new connections waits seconds in the listen queue while requests on open connections are served
// at once. The callers and the example IVR used to open one for nearly every request of a burst:
// the IVR's greeting for the first call waited behind the callers' own connections and came after
// the caller had stopped listening ("prompt dir-welcome not heard, best score 0.00"). Here a proxy
// in front of the server takes in new connections one per ADMIT_MS, the way such a server does, so
// the reproduction does not depend on the machine being busy.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { mentions } from '../../src/testing/caller.ts';
import { AriLink, PromptLibrary, readScenarioFile, runSuite } from '../../src/testing/index.ts';
import type { TestServer } from '../helpers/server.ts';
import { SCENARIOS, startExampleApp, startVoiceAppServer, stopExampleApp } from './voice-apps-helpers.ts';

/** One new connection taken in per this many ms: a server whose event loop turns at ~7/s. */
const ADMIT_MS = 150;
const CALLS = 10;

/** A TCP proxy that admits new connections one at a time, ADMIT_MS apart, and counts them. */
class SlowAcceptProxy {
  readonly server: net.Server;
  accepted = 0;
  private readonly waiting: net.Socket[] = [];
  private readonly open = new Set<net.Socket>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly upstreamPort: number) {
    this.server = net.createServer((client) => {
      client.pause();
      client.on('error', () => client.destroy());
      this.open.add(client);
      client.once('close', () => this.open.delete(client));
      this.waiting.push(client);
    });
    this.timer = setInterval(() => this.admit(), ADMIT_MS);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    for (const socket of this.open) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private admit(): void {
    const client = this.waiting.shift();
    if (!client || client.destroyed) return;
    this.accepted += 1;
    const upstream = net.connect(this.upstreamPort, '127.0.0.1');
    this.open.add(upstream);
    upstream.once('close', () => {
      this.open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}

describe('the first calls of a suite on a server slow to take in new connections', () => {
  let server: TestServer;
  let proxy: SlowAcceptProxy;
  let ivr: ChildProcess | undefined;
  let link: AriLink;

  before(async () => {
    server = await startVoiceAppServer();
    proxy = new SlowAcceptProxy(server.address.port);
    const url = await proxy.listen();
    ivr = await startExampleApp({ ...server, url }, 'ivr.js');
    link = new AriLink({ url, username: 'asterisk', password: 'asterisk' });
    await link.connect();
  });

  after(async () => {
    link?.close();
    await stopExampleApp(ivr);
    await proxy?.close();
    await server?.stop();
  });

  test(`${CALLS} calls side by side: the first hears its greeting; REST goes over the open events sockets, only media WebSockets are new connections`, async () => {
    const [sales] = readScenarioFile(`${SCENARIOS}ivr-sales.yaml`);
    const before = proxy.accepted;
    const result = await runSuite([{ ...sales!, repeat: CALLS }], { link, prompts: new PromptLibrary(), concurrency: CALLS });
    const failed = result.calls.filter((c) => !c.passed).map((c) => `${c.name}: ${c.error}`);
    assert.deepEqual(failed, []);
    // One media WebSocket per call; the callers' and the IVR's requests (some 15 per call) took none.
    assert.equal(proxy.accepted - before, CALLS, `${proxy.accepted - before} new connections for ${CALLS} calls`);
  });
});

test('a call takes the events naming its channels whole: …1 is not …10, and a playback target names its channel', () => {
  const event = (id: string): string => JSON.stringify({ type: 'ChannelStateChange', channel: { id, name: 'WebSocket/INCOMING/0x1' } });
  assert.equal(mentions(event('1795752622.1'), '1795752622.1'), true);
  assert.equal(mentions(event('1795752622.10'), '1795752622.1'), false);
  assert.equal(mentions(event('1795752622.100'), '1795752622.1'), false);
  assert.equal(mentions(event('11795752622.1'), '1795752622.1'), false);
  assert.equal(mentions(JSON.stringify({ playback: { target_uri: 'channel:1795752622.1' } }), '1795752622.1'), true);
});
