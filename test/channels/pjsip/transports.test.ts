// The SIP technology listens on one port for UDP and TCP (also when sip.port is 0), and answers
// OPTIONS on both.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

function options(transport: 'UDP' | 'TCP', port: number, localPort: number): string {
  return (
    `OPTIONS sip:127.0.0.1:${port} SIP/2.0\r\nVia: SIP/2.0/${transport} 127.0.0.1:${localPort};branch=z9hG4bK-${transport}-1;rport\r\n` +
    `From: <sip:probe@127.0.0.1>;tag=1\r\nTo: <sip:probe@127.0.0.1>\r\nCall-ID: transports-${transport}\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`
  );
}

test('OPTIONS over TCP on the SIP port is answered 200', async () => {
  const port = server.core.pjsip.port;
  assert.ok(port > 0);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  socket.write(options('TCP', port, socket.localPort!));
  const line = await new Promise<string>((resolve) => socket.once('data', (data) => resolve(data.toString('latin1').split('\r\n')[0])));
  socket.destroy();
  assert.equal(line, 'SIP/2.0 200 OK');
});

test('OPTIONS over UDP on the same port is answered 200, to the source port', async () => {
  const port = server.core.pjsip.port;
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString('latin1'))));
  socket.send(options('UDP', port, socket.address().port), port, '127.0.0.1');
  const text = await answer;
  socket.close();
  assert.equal(text.split('\r\n')[0], 'SIP/2.0 200 OK');
  assert.match(text, /^Allow: .*INVITE.*MESSAGE/m);
});
