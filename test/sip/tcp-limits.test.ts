// SIP over TCP against idle connections (issue 21, item 5): one address cannot hold more than its
// share of connections, a connection that sends no whole message is closed after a short time, and
// at the total cap a silent connection makes room for a client that speaks SIP — so 1,024 idle
// sockets from one host no longer lock every other TCP client out.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectTcp, request, sleep, startStack, waitUntil, type Stack, type TcpClient } from './helpers.ts';

// Long enough that the connections kept open stay open while a loaded machine opens seven more
// (it was 400 ms), short enough for the test of the timeout to be quick.
const FIRST_MESSAGE_TIMEOUT_MS = 2000;

describe('SIP TCP connection limits', () => {
  let stack: Stack;
  const clients: TcpClient[] = [];
  const open = async (address: string): Promise<TcpClient> => {
    const client = await connectTcp(stack.tcpPort, address);
    clients.push(client);
    return client;
  };
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await stack?.close();
  });

  it('one address gets maxConnectionsPerSource; another is still served', async () => {
    stack = await startStack({ onRequest: (_r, tx) => void tx.reply(200) }, { transport: { maxConnections: 8, maxConnectionsPerSource: 4, firstMessageTimeoutMs: FIRST_MESSAGE_TIMEOUT_MS } });
    const flood: TcpClient[] = [];
    for (let i = 0; i < 6; i++) flood.push(await open('127.0.0.1'));
    // The fifth and sixth are closed at once; "at once" is when the stack gets to them.
    await waitUntil(() => flood[4]!.closed && flood[5]!.closed, 10_000, 'the connections over the per-address cap closed');
    assert.deepEqual(flood.map((c) => c.closed), [false, false, false, false, true, true]);
    const phone = await open('127.0.0.2');
    phone.socket.write(request('OPTIONS', { port: phone.socket.localPort!, transport: 'TCP' }));
    await waitUntil(() => phone.text.includes('SIP/2.0 200'), 10_000, 'an answer for the other address');
  });

  it('silent connections are closed after firstMessageTimeoutMs; a connection that spoke stays', async () => {
    await waitUntil(() => clients.slice(0, 4).every((c) => c.closed), FIRST_MESSAGE_TIMEOUT_MS + 10_000, 'silent connections closed');
    await sleep(300);
    assert.equal(clients[6]!.closed, false, 'the phone that sent a request keeps its connection');
  });

  it('at the total cap a silent connection makes room for one that speaks SIP', async () => {
    const silent: TcpClient[] = [];
    for (let i = 0; i < 7; i++) silent.push(await open(`127.0.0.${10 + (i % 3)}`));
    await sleep(50);
    assert.equal(silent.filter((c) => c.closed).length, 0, '7 silent + the phone = 8');
    const late = await open('127.0.0.3');
    late.socket.write(request('OPTIONS', { port: late.socket.localPort!, transport: 'TCP' }));
    await waitUntil(() => late.text.includes('SIP/2.0 200'), 10_000, 'the newcomer is answered');
    // Its close reaches us on its own socket, maybe after the answer on the newcomer's.
    await waitUntil(() => silent[0]!.closed, 10_000, 'the oldest silent connection closed');
    assert.ok(silent[0]!.closed, 'the oldest silent connection was evicted');
    assert.equal(clients[6]!.closed, false, 'the phone was not evicted');
  });
});
