// Raw HTTP/1.1 over a TCP socket, for requests fetch() refuses to send (odd targets, upgrades).
import net from 'node:net';

/** Sends one request (lines without the final blank line) and resolves with the answer's status line ('' if none). */
export function rawRequest(url: string, lines: string[], timeoutMs = 2000): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received.split('\r\n')[0] ?? '');
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
