// CRLF keep-alives on SIP stream connections (pjsip.conf global keep_alive_interval): a connection
// that carried SIP gets them; a silent connection never does (so they cannot keep it open); and the
// idle limit still closes a connection whose peer sends nothing, keep-alives or not.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectTcp, request, sleep, startStack, waitUntil, type Stack, type TcpClient } from './helpers.ts';

describe('SIP TCP keep-alives', () => {
  let stack: Stack | undefined;
  const clients: TcpClient[] = [];
  after(async () => {
    for (const client of clients) client.socket.destroy();
    await stack?.close();
  });

  it('a connection that spoke gets CRLF CRLF every interval, a silent one none; both still close when their peer is idle', async () => {
    // Idle limit 3 s, keep-alives every 0.5 s: several keep-alives fall inside the idle time.
    stack = await startStack({ onRequest: (_r, tx) => void tx.reply(200) }, { transport: { idleTimeoutMs: 3000, firstMessageTimeoutMs: 20_000 } });
    stack.transport.setKeepAliveInterval(0.5);
    const phone = await connectTcp(stack.tcpPort);
    const silent = await connectTcp(stack.tcpPort);
    clients.push(phone, silent);
    phone.socket.write(request('OPTIONS', { port: phone.socket.localPort!, transport: 'TCP' }));
    await waitUntil(() => phone.text.includes('SIP/2.0 200'), 10_000, 'the answer');
    await waitUntil(() => /\r\n\r\n\r\n\r\n$/.test(phone.text.slice(phone.text.indexOf('Content-Length'))), 10_000, 'two keep-alives after the answer');
    assert.equal(silent.text, '', 'no keep-alive on a connection that never sent a message');
    // Nothing more from either peer: the idle limit closes both although keep-alives keep going out.
    await waitUntil(() => phone.closed && silent.closed, 15_000, 'idle connections closed');
    await sleep(10);
  });
});
