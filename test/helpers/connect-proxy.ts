// An HTTP CONNECT proxy for tests of outgoing WebSocket clients: it records each request head
// (request line and headers) and pipes the tunnel to the named host:port, or refuses with 403.
import net from 'node:net';

export interface ConnectProxy {
  readonly port: number;
  /** Each CONNECT request head, without the blank line. */
  readonly heads: string[];
  /** Stops listening and cuts every tunnel. */
  close(): Promise<void>;
}

export async function startConnectProxy(options: { refuse?: boolean } = {}): Promise<ConnectProxy> {
  const heads: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    sockets.add(downstream);
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      downstream.off('data', onData);
      heads.push(head.slice(0, end));
      if (options.refuse) return void downstream.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      const authority = /^CONNECT (\S+) HTTP\/1\.1/.exec(head)?.[1] ?? '';
      const colon = authority.lastIndexOf(':');
      const upstream = net.connect(Number(authority.slice(colon + 1)), authority.slice(0, colon), () => {
        downstream.write('HTTP/1.1 200 Connection established\r\n\r\n');
        downstream.pipe(upstream).pipe(downstream);
      });
      sockets.add(upstream);
      upstream.on('error', () => downstream.destroy());
      downstream.on('error', () => upstream.destroy());
    };
    downstream.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    heads,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
