// Free ports for peers the tests start as processes (they bind their own sockets, so the port is
// chosen here, released, then handed over: another process may still take it in between, which a
// caller that cares retries).
import dgram from 'node:dgram';
import net from 'node:net';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function bindsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function bindsUdp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = dgram.createSocket('udp4');
    probe.once('error', () => {
      probe.close();
      resolve(false);
    });
    probe.bind(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A port `p` for a SIP phone such as baresip, which listens on UDP and TCP `p` and TLS on `p + 1`:
 * all three are free when this returns.
 */
export async function freeSipPhonePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port >= 65535) continue;
    if ((await bindsUdp(port)) && (await bindsTcp(port + 1)) && (await bindsUdp(port + 1))) return port;
  }
  throw new Error('no free port pair for the SIP phone');
}
