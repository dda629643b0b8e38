/**
 * Interop with SIPp (Debian package sip-tester): its built-in uac scenario calls a tiny UAS built
 * from our layers (INVITE → 180, 200 with SDP; ACK; BYE → 200), and our client transactions call
 * its built-in uas scenario. UDP and TCP. Skipped when sipp is not installed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { SipRequest, newCallId, newTag, type SipResponse } from '../../src/sip/message.ts';
import type { TransportProtocol } from '../../src/sip/transport.ts';
import { startStack, waitUntil, type Stack } from '../sip/helpers.ts';

function findSipp(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v sipp'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const SIPP = findSipp();
const skip = SIPP ? false : 'sipp not installed (Debian package sip-tester; CI installs it)';

const SDP = 'v=0\r\no=patchbay 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';

/** A port free for both UDP and TCP on 127.0.0.1. */
async function freePort(): Promise<number> {
  for (;;) {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
    const udp = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise((r) => server.close(r));
    if (ok) {
      await new Promise<void>((r) => udp.close(() => r()));
      return port;
    }
    udp.close();
  }
}

function runSipp(args: string[], timeoutMs = 30_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(SIPP!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output = (output + d.toString()).slice(-20_000)));
    child.stderr.on('data', (d) => (output = (output + d.toString()).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A minimal UAS from our layers: answers INVITE with 180 then 200, BYE and OPTIONS with 200. */
async function tinyUas(): Promise<{ stack: Stack; calls: { invites: number; acks: number; byes: number } }> {
  const calls = { invites: 0, acks: 0, byes: 0 };
  const stack = await startStack(
    {
      onRequest(request, tx) {
        if (request.method === 'INVITE') {
          calls.invites++;
          tx.reply(180);
          const local = stack.transport.localAddress(tx.source.transport);
          setTimeout(() => tx.reply(200, 'OK', [['Contact', `<sip:uas@127.0.0.1:${local.port};transport=${tx.source.transport.toLowerCase()}>`]], SDP, 'application/sdp'), 20);
        } else if (request.method === 'BYE') {
          calls.byes++;
          tx.reply(200);
        } else tx.reply(request.method === 'OPTIONS' ? 200 : 501);
      },
      onAck() {
        calls.acks++;
      },
    },
    { timers: { t1: 500, t2: 4000, t4: 5000, timerD: 32000, trying: 200 } },
  );
  return { stack, calls };
}

const stacks: Stack[] = [];
after(async () => {
  for (const s of stacks) await s.close();
});

describe('SIPp interop', { skip }, () => {
  for (const transport of ['UDP', 'TCP'] as TransportProtocol[]) {
    it(`SIPp's uac scenario completes 5 calls against our UAS over ${transport}`, async () => {
      const { stack, calls } = await tinyUas();
      stacks.push(stack);
      const port = transport === 'UDP' ? stack.udpPort : stack.tcpPort;
      const local = await freePort();
      const result = await runSipp(['-sn', 'uac', `127.0.0.1:${port}`, '-i', '127.0.0.1', '-p', String(local), '-t', transport === 'UDP' ? 'u1' : 't1', '-m', '5', '-r', '20', '-l', '5', '-d', '50', '-timeout', '20s', '-timeout_error', '-max_retrans', '3', '-nostdin'], 30_000);
      assert.equal(result.code, 0, `sipp failed (exit ${result.code}):\n${result.output.slice(-3000)}`);
      assert.equal(calls.invites, 5);
      assert.equal(calls.acks, 5);
      assert.equal(calls.byes, 5);
      await waitUntil(() => stack.layer.counts.pending2xx === 0, 2000);
    });
  }

  it("our client transactions call SIPp's uas scenario (INVITE, ACK for 2xx, BYE)", async () => {
    const stack = await startStack({ onRequest: (_r, tx) => void tx.reply(200) }, { timers: { t1: 500, t2: 4000, t4: 5000, timerD: 32000, trying: 200 } });
    stacks.push(stack);
    const port = await freePort();
    const sipp = runSipp(['-sn', 'uas', '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '20s', '-timeout_error', '-nostdin'], 30_000);
    await new Promise((r) => setTimeout(r, 500));
    const dest = { transport: 'UDP' as const, host: '127.0.0.1', port };
    const callId = newCallId();
    const fromTag = newTag();
    const local = stack.transport.localAddress('UDP');
    const make = (method: string, seq: number, toTag?: string): SipRequest =>
      new SipRequest(method, `sip:service@127.0.0.1:${port}`, [
        ['From', `<sip:patchbay@127.0.0.1>;tag=${fromTag}`],
        ['To', `<sip:service@127.0.0.1:${port}>${toTag ? `;tag=${toTag}` : ''}`],
        ['Call-ID', callId],
        ['CSeq', `${seq} ${method}`],
        ['Contact', `<sip:patchbay@127.0.0.1:${local.port}>`],
      ]);
    const invite = make('INVITE', 1);
    invite.set('Content-Type', 'application/sdp');
    invite.body = Buffer.from(SDP);
    let answer: SipResponse | undefined;
    const statuses: number[] = [];
    // SIPp may still be starting: retransmission covers it
    stack.layer.sendRequest(invite, dest, {
      onResponse: (r) => {
        statuses.push(r.status);
        if (r.status >= 200) answer = r;
      },
    });
    await waitUntil(() => answer !== undefined, 10_000, 'answer from SIPp');
    assert.equal(answer!.status, 200);
    assert.ok(statuses.includes(180));
    await stack.layer.sendAck(make('ACK', 1, answer!.toTag()), dest);
    let byeStatus = 0;
    stack.layer.sendRequest(make('BYE', 2, answer!.toTag()), dest, { onResponse: (r) => (byeStatus = r.status) });
    await waitUntil(() => byeStatus === 200, 10_000, '200 to BYE');
    const result = await sipp;
    assert.equal(result.code, 0, `sipp uas failed (exit ${result.code}):\n${result.output.slice(-3000)}`);
  });
});
