// A TLS end in front of SIPp, whose Debian build has no TLS (`sipp -t l1` says "you must compile
// SIPp with OpenSSL"): SIPp speaks SIP over TCP to this relay, which carries the bytes unchanged over
// TLS to Patchbay (tcpToTls), or takes Patchbay's TLS connections and hands their bytes to a SIPp
// listening on TCP (tlsToTcp). Patchbay sees a real TLS peer — handshake, certificates, SNI — and
// SIPp's scenario logic answers; one TCP connection per TLS connection, closed together.
import net from 'node:net';
import tls from 'node:tls';

export interface TlsRelay {
  readonly port: number;
  /** TLS connections made or accepted so far (with TLS 1.3 a server has accepted before the client checked its certificate). */
  readonly connections: number;
  /** Bytes that came out of the TLS connections (what the TLS peer sent). */
  readonly received: number;
  close(): Promise<void>;
}

function pipeBoth(a: net.Socket, b: net.Socket): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

async function listen(server: net.Server, sockets: Set<net.Socket>, count: () => number, received: () => number): Promise<TlsRelay> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    get connections() {
      return count();
    },
    get received() {
      return received();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** TCP on an ephemeral 127.0.0.1 port, each connection carried over TLS to `target` (`options`: CA, client certificate, SNI). */
export function tcpToTls(target: { host: string; port: number }, options: tls.ConnectionOptions): Promise<TlsRelay> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  let received = 0;
  const server = net.createServer((plain) => {
    sockets.add(plain);
    plain.pause();
    const secure = tls.connect({ ...options, host: target.host, port: target.port });
    sockets.add(secure);
    secure.once('secureConnect', () => {
      count++;
      plain.resume();
    });
    secure.on('data', (chunk: Buffer) => (received += chunk.length));
    pipeBoth(plain, secure);
  });
  return listen(server, sockets, () => count, () => received);
}

/** TLS on an ephemeral 127.0.0.1 port with `options` (certificate, key), each connection carried over TCP to `target`. */
export function tlsToTcp(target: { host: string; port: number }, options: tls.TlsOptions): Promise<TlsRelay> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  let received = 0;
  const server = tls.createServer(options, (secure) => {
    count++;
    secure.on('data', (chunk: Buffer) => (received += chunk.length));
    sockets.add(secure);
    const plain = net.connect(target.port, target.host);
    sockets.add(plain);
    pipeBoth(secure, plain);
  });
  server.on('tlsClientError', () => undefined);
  return listen(server, sockets, () => count, () => received);
}
