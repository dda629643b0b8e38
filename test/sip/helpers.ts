/** Test helpers: a SIP stack on 127.0.0.1 and raw UDP/TCP peers that record what they receive. */
import dgram from 'node:dgram';
import net from 'node:net';
import { parseMessage } from '../../src/sip/parser.ts';
import type { SipMessage } from '../../src/sip/message.ts';
import type { TimerSettings, TransactionLayer, TransactionUser } from '../../src/sip/transaction/index.ts';
import { openSipStack } from '../../src/sip/stack.ts';
import type { SipTransport, TransportOptions } from '../../src/sip/transport.ts';

export const FAST: Partial<TimerSettings> = { t1: 25, t2: 100, t4: 100, timerD: 100, trying: -1, timerC: 5000 };

export interface Stack {
  transport: SipTransport;
  layer: TransactionLayer;
  udpPort: number;
  tcpPort: number;
  close(): Promise<void>;
}

export async function startStack(tu: TransactionUser, options: { timers?: Partial<TimerSettings>; maxTransactions?: number; transport?: TransportOptions } = {}): Promise<Stack> {
  const { transport, layer } = openSipStack({ host: '127.0.0.1', udpPort: 0, tcpPort: 0, ...options.transport }, tu, { timers: { ...FAST, ...options.timers }, maxTransactions: options.maxTransactions });
  await transport.start();
  return {
    transport,
    layer,
    udpPort: transport.port('UDP')!,
    tcpPort: transport.port('TCP')!,
    async close() {
      layer.close();
      await transport.close();
    },
  };
}

export interface Received {
  text: string;
  message?: SipMessage;
  at: number;
}

/** Polls until `predicate` holds; 15 s by default (3 s ran out under CI load; only a failing test waits that long). */
export async function waitUntil(predicate: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class UdpPeer {
  readonly received: Received[] = [];
  private socket = dgram.createSocket('udp4');
  port = 0;

  async start(): Promise<this> {
    this.socket.on('message', (data) => {
      const r = parseMessage(data);
      this.received.push({ text: data.toString(), message: r.ok ? r.message : undefined, at: Date.now() });
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', () => resolve()));
    this.port = this.socket.address().port;
    return this;
  }

  send(text: string, port: number): void {
    this.socket.send(Buffer.from(text), port, '127.0.0.1');
  }

  messages(filter: (m: SipMessage) => boolean = () => true): SipMessage[] {
    return this.received.flatMap((r) => (r.message && filter(r.message) ? [r.message] : []));
  }

  close(): void {
    this.socket.close();
  }
}

export class TcpPeer {
  readonly chunks: Buffer[] = [];
  socket!: net.Socket;
  closed = false;

  async connect(port: number): Promise<this> {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d) => this.chunks.push(d));
    this.socket.on('close', () => (this.closed = true));
    this.socket.on('error', () => undefined);
    await new Promise<void>((resolve) => this.socket.once('connect', () => resolve()));
    return this;
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString();
  }

  get port(): number {
    return this.socket.localPort!;
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  close(): void {
    this.socket.destroy();
  }
}

let counter = 0;
/** A request text from a peer. */
export function request(method: string, options: { port: number; transport?: string; branch?: string; via?: string; callId?: string; cseq?: number; toTag?: string; body?: string; extra?: string[] }): string {
  const branch = options.branch ?? `z9hG4bKpeer${++counter}`;
  const via = options.via ?? `SIP/2.0/${options.transport ?? 'UDP'} 127.0.0.1:${options.port};branch=${branch};rport`;
  const body = options.body ?? '';
  return [
    `${method} sip:service@127.0.0.1 SIP/2.0`,
    `Via: ${via}`,
    'Max-Forwards: 70',
    `To: <sip:service@127.0.0.1>${options.toTag ? `;tag=${options.toTag}` : ''}`,
    'From: <sip:peer@127.0.0.1>;tag=peer1',
    `Call-ID: ${options.callId ?? `call${counter}@test`}`,
    `CSeq: ${options.cseq ?? 1} ${method}`,
    `Contact: <sip:peer@127.0.0.1:${options.port}>`,
    ...(options.extra ?? []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/** Records when the stack hands each message to the transport (the timers' schedule, not the network's). */
export function recordSends(transport: SipTransport): Array<{ at: number; message: SipMessage }> {
  const sends: Array<{ at: number; message: SipMessage }> = [];
  const original = transport.send.bind(transport);
  transport.send = (message, dest) => {
    sends.push({ at: Date.now(), message });
    return original(message, dest);
  };
  return sends;
}

/**
 * Checks a retransmission schedule: each gap at least the expected interval (timers never fire
 * early, and a late timer only delays the next one), the count no more than expected and not far
 * below it (a loaded machine makes timers late).
 */
export function checkSchedule(times: number[], expectedGaps: number[], what: string): void {
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  if (gaps.length > expectedGaps.length) throw new Error(`${what}: ${times.length} sends, at most ${expectedGaps.length + 1} expected (gaps ${gaps.join(', ')})`);
  if (gaps.length < expectedGaps.length - 4) throw new Error(`${what}: only ${times.length} sends of ${expectedGaps.length + 1} (gaps ${gaps.join(', ')})`);
  gaps.forEach((gap, i) => {
    if (gap < expectedGaps[i] - 3) throw new Error(`${what}: gap ${i} is ${gap} ms, expected ≥ ${expectedGaps[i]} (gaps ${gaps.join(', ')})`);
  });
}

/** A raw TCP connection to the SIP listener, keeping what it received and whether it was closed. */
export interface TcpClient {
  readonly socket: net.Socket;
  closed: boolean;
  text: string;
}

/** Connects to the SIP TCP listener on `port` (from `localAddress`, when given: one client host each). */
export function connectTcp(port: number, localAddress?: string): Promise<TcpClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    const client: TcpClient = { socket, closed: false, text: '' };
    socket.on('data', (data) => (client.text += data.toString('latin1')));
    socket.on('close', () => (client.closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(client));
    socket.once('error', reject);
  });
}
