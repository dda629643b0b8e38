// The media sockets' lookup (literal-lookup.ts): a literal address is answered at once, so send()
// hands the datagram over before it returns — the bytes that leave are those of the buffer at the
// call, even when the buffer is rewritten right after — while a name still goes through DNS.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { literalAddressLookup } from '../../../src/media/rtp/literal-lookup.ts';
import { closeQuietly, RtpPortRange } from '../../../src/media/rtp/port-range.ts';

async function receiver(): Promise<{ socket: dgram.Socket; port: number; next(): Promise<Buffer> }> {
  const socket = dgram.createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, port: socket.address().port, next: async () => (await once(socket, 'message'))[0] as Buffer };
}

test('literals are answered at once with their own family; a name is looked up', async () => {
  const lookup = literalAddressLookup();
  const answers: Array<[string, number]> = [];
  for (const address of ['127.0.0.1', '127.0.0.1', '::1', '10.0.0.7']) lookup(address, 4, (error, ip, family) => void (assert.equal(error, null), answers.push([ip, family])));
  // Synchronous: every literal answered before the loop ended.
  assert.deepEqual(answers, [['127.0.0.1', 4], ['127.0.0.1', 4], ['::1', 6], ['10.0.0.7', 4]]);
  let answered = false;
  const named = new Promise<[string, number]>((resolve, reject) =>
    lookup('localhost', 4, (error, ip, family) => {
      answered = true;
      if (error) reject(error);
      else resolve([ip, family]);
    }),
  );
  assert.equal(answered, false, 'a name is not answered synchronously');
  assert.deepEqual(await named, ['127.0.0.1', 4]);
});

test('a media socket sends the bytes of the buffer as they were at send(), rewritten right after or not', async (t) => {
  const far = await receiver();
  const range = new RtpPortRange(15000 + 2 * Math.floor(Math.random() * 2000), 25000);
  const socket = await range.bind('127.0.0.1');
  t.after(() => {
    closeQuietly(socket);
    closeQuietly(far.socket);
  });
  const buffer = Buffer.alloc(12, 1);
  const received = far.next();
  socket.send(buffer, 0, buffer.length, far.port, '127.0.0.1');
  buffer.fill(2);
  assert.equal((await received)[0], 1);
});

test('a media socket still sends to a name (looked up first)', async (t) => {
  const far = await receiver();
  const range = new RtpPortRange(15000 + 2 * Math.floor(Math.random() * 2000), 25000);
  const socket = await range.bind('127.0.0.1');
  t.after(() => {
    closeQuietly(socket);
    closeQuietly(far.socket);
  });
  const received = far.next();
  socket.send(Buffer.from('hello'), 0, 5, far.port, 'localhost');
  assert.equal((await received).toString(), 'hello');
});
