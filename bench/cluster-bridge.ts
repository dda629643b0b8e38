// The audio latency a bridge across cluster members adds (docs/cluster.md, "A bridge across
// members"): a real nats-server -js and two members in this process. Two UnicastRTP channels
// (ARI externalMedia, slin16) whose far ends are UDP sockets of this script are put into one
// bridge on member 2 — once with both channels on member 2, once with the sender on member 1 (its
// audio crosses a media leg). The script sends 20 ms RTP packets of silence with a loud packet
// every 400 ms into the first channel and times each loud packet's arrival from the second one;
// the figure is the median of each case and their difference.
// Usage: npm run bench:cluster-bridge [-- --impulses 25]
import dgram from 'node:dgram';
import { parseArgs } from 'node:util';
import { startTestServer, type EventSocket, type TestServer } from '../test/helpers/server.ts';
import { natsServerInstalled, startNatsServer } from '../test/helpers/nats-server.ts';

const { values } = parseArgs({ options: { impulses: { type: 'string', default: '25' } } });
const IMPULSES = Math.min(Math.max(Math.floor(Number(values.impulses)) || 25, 5), 500);
const APP = 'xbench';
const SAMPLES = 320; // 20 ms at 16 kHz
const LOUD = 12_000;

type Json = Record<string, any>;

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function bound(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

/** An externalMedia channel on `server` whose far end is `socket`; its RTP port. */
async function externalChannel(server: TestServer, socket: dgram.Socket, id: string, events: EventSocket): Promise<number> {
  const response = await server.ari(`/channels/externalMedia?app=${APP}&channelId=${id}&external_host=127.0.0.1:${socket.address().port}&format=slin16`, { method: 'POST' });
  if (response.status !== 200) throw new Error(`externalMedia ${id}: ${response.status} ${await response.text()}`);
  const channel = (await response.json()) as Json;
  await until(`StasisStart of ${id}`, () => (events.messages as Json[]).some((event) => event.type === 'StasisStart' && event.channel?.id === id));
  return Number(channel.channelvars?.UNICASTRTP_LOCAL_PORT ?? channel.channelvars?.local_port);
}

/** Sends the impulses into `toPort` from `sender` and times their arrival at `receiver`: ms each. */
async function measure(sender: dgram.Socket, toPort: number, receiver: dgram.Socket): Promise<number[]> {
  const header = Buffer.alloc(12);
  let sequence = 0;
  let timestamp = 0;
  const silence = Buffer.alloc(SAMPLES * 2);
  const loud = Buffer.alloc(SAMPLES * 2);
  for (let i = 0; i < SAMPLES; i++) loud.writeInt16BE(Math.round(LOUD * Math.sin((2 * Math.PI * 1000 * i) / 16_000)), i * 2);
  let sentAt: number | undefined;
  const latencies: number[] = [];
  receiver.on('message', (packet) => {
    if (sentAt === undefined || packet.length < 12 + 2) return;
    let peak = 0;
    for (let offset = 12; offset + 1 < packet.length; offset += 2) peak = Math.max(peak, Math.abs(packet.readInt16BE(offset)));
    if (peak > LOUD / 4) {
      latencies.push(performance.now() - sentAt);
      sentAt = undefined;
    }
  });
  const packetsPerImpulse = 20;
  for (let packet = 0; latencies.length < IMPULSES && packet < IMPULSES * packetsPerImpulse * 3; packet++) {
    header[0] = 0x80;
    header[1] = 118;
    header.writeUInt16BE(sequence++ & 0xffff, 2);
    header.writeUInt32BE(timestamp >>> 0, 4);
    header.writeUInt32BE(0x12345678, 8);
    timestamp += SAMPLES;
    const isImpulse = packet % packetsPerImpulse === packetsPerImpulse - 1;
    if (isImpulse) sentAt = performance.now();
    sender.send(Buffer.concat([header, isImpulse ? loud : silence]), toPort, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  receiver.removeAllListeners('message');
  return latencies;
}

const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  if (!natsServerInstalled()) {
    console.log('nats-server is not installed: nothing measured');
    return;
  }
  const nats = await startNatsServer();
  const settings = (node: string, serverId: string): Json => ({ server_id: serverId, ari: { developer_mode: false }, logging: { level: 'warn' }, cluster: { nats_url: nats.url, node_id: node } });
  const one = await startTestServer(settings('bench1', '02:00:00:00:bb:01'));
  const two = await startTestServer(settings('bench2', '02:00:00:00:bb:02'));
  const events = await two.events(`app=${APP}`);
  const sockets: dgram.Socket[] = [];
  try {
    await until('the application known on member 1', async () => (await one.ari(`/applications/${APP}`)).status === 200);
    const figures: Record<string, number> = {};
    for (const [label, senderHost] of [['one member', two], ['across members', one]] as const) {
      const sender = await bound();
      const receiver = await bound();
      sockets.push(sender, receiver);
      const tag = label === 'one member' ? 'l' : 'x';
      const senderPort = await externalChannel(senderHost, sender, `${tag}-send`, events);
      await externalChannel(two, receiver, `${tag}-hear`, events);
      if ((await two.ari(`/bridges?bridgeId=${tag}-bridge`, { method: 'POST' })).status !== 200) throw new Error('bridge not created');
      const added = await two.ari(`/bridges/${tag}-bridge/addChannel?channel=${tag}-send,${tag}-hear`, { method: 'POST' });
      if (added.status !== 204) throw new Error(`addChannel: ${added.status} ${await added.text()}`);
      const latencies = await measure(sender, senderPort, receiver);
      figures[label] = median(latencies);
      console.log(`${label}: ${latencies.length} impulses, median ${figures[label]!.toFixed(1)} ms (min ${Math.min(...latencies).toFixed(1)}, max ${Math.max(...latencies).toFixed(1)})`);
      await two.ari(`/bridges/${tag}-bridge`, { method: 'DELETE' });
    }
    console.log(`added by the media leg: ${(figures['across members']! - figures['one member']!).toFixed(1)} ms (median against median)`);
  } finally {
    for (const socket of sockets) socket.close();
    await events.close();
    await two.stop();
    await one.stop();
    await nats.stop();
  }
}

await main();
