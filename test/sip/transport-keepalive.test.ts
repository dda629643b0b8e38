// tcp_keepalive_enable / tcp_keepalive_idle_time: the TCP connections a transport accepts carry the
// kernel's keep-alive timer (what `ss -o` shows as timer:(keepalive,…)); without them they do not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { SipTransport } from '../../src/sip/transport.ts';

const HAVE_SS = spawnSync('ss', ['-V'], { encoding: 'utf8' }).error === undefined;

/** The `ss -tno` line of the server side of a connection on `port` (its local port) to `clientPort`. */
function serverSide(port: number, clientPort: number): string {
  const out = spawnSync('ss', ['-tnoH', 'state', 'established', `( sport = :${port} and dport = :${clientPort} )`], { encoding: 'utf8' }).stdout;
  return out.trim();
}

async function accepted(keepAliveMs: number | undefined): Promise<string> {
  const transport = new SipTransport({ host: '127.0.0.1', udpPort: false, tcpPort: 0, ...(keepAliveMs ? { tcpKeepAliveMs: keepAliveMs } : {}) });
  await transport.start();
  const port = transport.port('TCP')!;
  const client = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => client.once('connect', () => resolve()).once('error', reject));
  try {
    // The server's socket is set up when the connection is accepted: wait for it (bounded), not for a fixed time.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const line = serverSide(port, client.localPort!);
      if (line !== '' && (keepAliveMs === undefined || line.includes('keepalive') || Date.now() > deadline)) return line;
      if (Date.now() > deadline) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    client.destroy();
    await transport.close();
  }
}

test('tcp keep-alive: accepted connections get the keepalive timer only when enabled', { skip: HAVE_SS ? false : 'ss is not installed' }, async () => {
  assert.match(await accepted(45_000), /timer:\(keepalive,/);
  assert.doesNotMatch(await accepted(undefined), /keepalive/);
});
